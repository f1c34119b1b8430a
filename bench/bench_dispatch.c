/*
 * Dispatch overhead of the real executor: no-op tasks over many small
 * partitions (a source task yields one 16-byte row, a map passes it on),
 * on the slots of this machine. Prints tasks per second and microseconds
 * per task, median of several runs (bench/micro.h).
 *
 * usage: bench_dispatch [source_tasks] [runs]
 */
#include <stdlib.h>

#include "bench/micro.h"

int main(int argc, char **argv)
{
  int64_t n = argc > 1 ? atoll(argv[1]) : 200000;
  int runs = argc > 2 ? atoi(argv[2]) : 5;
  double rate;
  return sl_bench_dispatch(n, runs, true, &rate) < 0 ? 1 : 0;
}
