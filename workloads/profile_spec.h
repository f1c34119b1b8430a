/**
 * @file profile_spec.h
 * @brief System cost profile files (models/profile.h) read with the typed
 *        INI reader, and found by name in the source tree's `profiles/`.
 *
 * A profile file has one section, `[profile]`: a name, and each cost it
 * charges (every cost defaults to 0, nothing). The file says where each
 * number comes from, in a comment beside it:
 *
 *     [profile]
 *     name = raydata
 *     task = 1.02ms      ; Ray's release microbenchmark: 980.7 sync tasks/s
 *     put = 0.193ms      ; 5,173 puts/s
 *
 * Errors are `FILE:LINE: what is wrong`, as for every spec.
 */
#ifndef SL_PROFILE_SPEC_H
#define SL_PROFILE_SPEC_H

#include <stddef.h>

#include "models/profile.h"
#include "workloads/typed_ini.h"

/**
 * @brief Reads the profile file at @p path into @p out.
 * @return 0; SL_EIO when it cannot be read; SL_EPARSE with the message in
 *         @p err. @p out is left ideal on error.
 */
int sl_profile_load(const char *path, sl_profile *out, char *err, size_t errlen);

/**
 * @brief The file a profile argument names: @p arg itself when it names a
 *        file (it holds a '/' or ends in ".ini"), else `DIR/profiles/ARG.ini`
 *        with DIR the installed source tree. Returns @p buf.
 */
char *sl_profile_path(const char *arg, const char *data_dir, char *buf, size_t n);

/** @brief The profile file's keys, for `sluice spec` and docs/spec.md. */
const sl_ini_schema *sl_profile_schema(void);

#endif
