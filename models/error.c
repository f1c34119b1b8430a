#include "error.h"

const char *sl_strerror(int code)
{
  switch (code) {
  case SL_OK:
    return "success";
#define SL__ERR_MSG(name, msg)                                                 \
  case SL_E##name:                                                             \
    return msg;
    SL_ERRNO_MAP(SL__ERR_MSG)
#undef SL__ERR_MSG
  default:
    return "unknown error";
  }
}
