#include "kernel_registry.h"

#include <string.h>

static const sl_kernel_info kernels[] = {
  {"generate", "rows of row_bytes with deterministic, incompressible content", true, {NULL}, false, false},
  {"jpeg_generate", "synthetic images encoded as JPEG (libjpeg-turbo)", true,
   {"width", "height", "quality", "corrupt_every", NULL}, false, false},
  {"noop", "passes rows through untouched", false, {NULL}, false, false},
  {"sleep", "holds the slot for the modelled time, then passes rows on", false, {NULL}, false, false},
  {"spin", "busy CPU for the modelled time, then passes rows on", false, {NULL}, false, false},
  {"jpeg_decode", "decodes JPEG rows into RGB pixels", false, {NULL}, false, false},
  {"resize_normalize", "resizes RGB images and normalizes them to float tensors", false,
   {"width", "height", NULL}, false, false},
  {"gemm_classifier", "dense layers with seeded weights over float rows (CPU or CUDA)", false,
   {"layers", "hidden", "classes", NULL}, false, false},
  {"center_crop", "keeps the centered `percent` of an image's width and height (uint8 or float rows)", false,
   {"percent", NULL}, false, false},
  {"augment", "random flip, gain and offset per channel, then `passes` rounds of blur (uint8 or float rows)", false,
   {"passes", NULL}, false, false},
  {"normalize", "uint8 RGB pixels to float32 tensors standardized by ImageNet's statistics (4 bytes out per byte in)",
   false, {NULL}, false, false},
  {"gensort", "100-byte records of the sort benchmark: a 10-byte random key, the record's number, filler", true,
   {NULL}, false, false},
  {"sort_records", "sorts a task's records by their 10-byte key; as an all_to_all, range-partitions them by key",
   false, {NULL}, true, false},
  {"shuffle_rows", "a random shuffle (Ray Data's random_shuffle): as an all_to_all, each row goes to a reducer by a "
   "seeded hash of its id and comes out in that hash's order", false, {NULL}, true, false},
  {"groupby", "count, sum, min and max of the record numbers of each group of gensort records (the first "
   "`key_bytes` bytes of the key): as a map, one partial row per group of a task (the combine); as an all_to_all, "
   "each group to the reducer of its key range, partial rows folded into one", false, {"key_bytes", NULL}, true, true},
};

const sl_kernel_info *sl_kernel_info_find(const char *name)
{
  for (unsigned i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
    if (strcmp(kernels[i].name, name) == 0)
      return &kernels[i];
  return NULL;
}

bool sl_kernel_info_has_param(const sl_kernel_info *k, const char *param)
{
  for (int i = 0; k->params[i]; i++)
    if (strcmp(k->params[i], param) == 0)
      return true;
  return false;
}

int sl_kernel_info_count(void)
{
  return (int)(sizeof kernels / sizeof kernels[0]);
}

const sl_kernel_info *sl_kernel_info_at(int i)
{
  return i >= 0 && i < sl_kernel_info_count() ? &kernels[i] : NULL;
}
