/**
 * @file error.h
 * @brief The one error convention of sluice.
 *
 * Commands return 0 or a negative code from this table; predicates return
 * bool; constructors return NULL. sl_strerror() gives the message of a code.
 * The table is an X-macro so the enum and the messages cannot drift apart.
 */
#ifndef SL_ERROR_H
#define SL_ERROR_H

#define SL_ERRNO_MAP(X)                                                        \
  X(NOMEM, "out of memory")                                                    \
  X(INVAL, "invalid argument")                                                 \
  X(IO, "input/output error")                                                  \
  X(PARSE, "malformed specification")                                          \
  X(UNSAT, "no node can satisfy the resource request")                        \
  X(OOM, "memory budget exhausted")                                            \
  X(AGAIN, "try again later")                                                  \
  X(NOENT, "no such entry")                                                    \
  X(LP, "linear program could not be solved")                                  \
  X(STATE, "operation not valid in the current state")                         \
  X(KERNEL, "kernel failed on a row")                                          \
  X(INTR, "interrupted")                                                       \
  X(STALL, "no progress")                                                      \
  X(PROTO, "protocol violation")

typedef enum {
  SL_OK = 0,
#define SL__ERR_ENUM(name, msg) SL_E##name,
  SL__ERR_FIRST = -1000,
  SL_ERRNO_MAP(SL__ERR_ENUM)
#undef SL__ERR_ENUM
  SL__ERR_LAST
} sl_err;

/** @brief Marks a function whose failure matters: the compiler warns (an
 *  error in CI) where a caller drops its result. */
#define SL_MUST_CHECK __attribute__((warn_unused_result))

/** @brief The message of an error code; never NULL, static storage. */
const char *sl_strerror(int code);

#endif
