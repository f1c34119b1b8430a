/*
 * A partition transfer (transport/xfer.h) against a raw TCP stream, both
 * over loopback: the same bytes fetched by the client from a server that
 * sends them from the published buffer, and read from a plain socket
 * that a writer fills with write(2), both in pieces of the transfer's
 * chunk (of all the sizes tried, 64 KiB to the whole buffer, 1 MiB gave
 * the raw stream its best rate here). Each side runs in threads of one
 * process, the connection made beforehand, both buffers touched first so
 * that no page fault is timed. Runs alternate which goes first. Prints
 * each run, then both rates as medians and the transfer's median over the
 * raw stream's, and the same for the CPU time each took per 100 MB, all
 * threads counted (ZeroMQ's too): on a loaded machine, a steadier measure
 * of the transfer's cost than the rates.
 *
 * The process keeps freed chunk buffers for the next (sl_xfer_tune_allocator()),
 * as a worker does; "plain" as the fifth argument leaves glibc's defaults.
 *
 * usage: bench_transfer [MB] [runs] [chunk_KiB] [window] [plain]
 *        (defaults: 256 MB, 7 runs, the client's default chunk and window)
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zmq.h>

#include "bench/micro.h"
#include "transport/xfer.h"

#define MB 1e6

typedef struct {
  const uint8_t *src;
  size_t n, piece;
  int listener;
} raw_writer;

/* Writes the whole buffer each time the reader asks ('g'), until 'q'. */
static void *raw_write(void *arg)
{
  raw_writer *w = arg;
  int fd = accept(w->listener, NULL, NULL);
  char ask;
  while (fd >= 0 && read(fd, &ask, 1) == 1 && ask == 'g')
    for (size_t off = 0; off < w->n;) {
      ssize_t k = write(fd, w->src + off, w->n - off < w->piece ? w->n - off : w->piece);
      if (k <= 0)
        goto close_fd;
      off += (size_t)k;
    }
close_fd:
  if (fd >= 0)
    close(fd);
  return NULL;
}

/* CPU seconds this process has used, all its threads (ZeroMQ's too). */
static double cpu_s(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Seconds to read @p n bytes from @p fd into @p dst, after asking for them. */
static double raw_read(int fd, uint8_t *dst, size_t n, size_t piece)
{
  double t0 = sl_bench_now();
  if (write(fd, "g", 1) != 1)
    return -1;
  for (size_t off = 0; off < n;) {
    ssize_t k = read(fd, dst + off, n - off < piece ? n - off : piece);
    if (k <= 0)
      return -1;
    off += (size_t)k;
  }
  return sl_bench_now() - t0;
}

typedef struct {
  sl_xfer_server *s;
  atomic_bool stop;
} serving;

static void *serve(void *arg)
{
  serving *sv = arg;
  char err[256];
  while (!atomic_load(&sv->stop))
    if (sl_xfer_server_serve(sv->s, 20, err, sizeof err) < 0) {
      fprintf(stderr, "bench_transfer: %s\n", err);
      break;
    }
  return NULL;
}

/* A listening socket on 127.0.0.1, any port; its address in @p addr. */
static int listen_loopback(struct sockaddr_in *addr)
{
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  socklen_t len = sizeof *addr;
  memset(addr, 0, sizeof *addr);
  addr->sin_family = AF_INET;
  addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, (struct sockaddr *)addr, sizeof *addr) != 0 || listen(fd, 1) != 0 ||
      getsockname(fd, (struct sockaddr *)addr, &len) != 0) {
    perror("bench_transfer: raw socket");
    return -1;
  }
  return fd;
}

int main(int argc, char **argv)
{
  size_t n = (size_t)((argc > 1 ? atof(argv[1]) : 256) * MB);
  int runs = argc > 2 ? atoi(argv[2]) : 7;
  sl_xfer_opts o;
  sl_xfer_opts_default(&o);
  if (argc > 3)
    o.chunk_bytes = (uint32_t)(atof(argv[3]) * 1024);
  if (argc > 4)
    o.window = (uint32_t)atoi(argv[4]);
  bool plain = argc > 5 && strcmp(argv[5], "plain") == 0;
  if (runs < 1 || runs > 100 || n == 0 || (argc > 5 && !plain)) {
    fprintf(stderr, "usage: bench_transfer [MB] [runs] [chunk_KiB] [window] [plain]\n");
    return 2;
  }
  if (!plain && sl_xfer_tune_allocator() != 0)
    fprintf(stderr, "bench_transfer: the allocator kept its defaults\n");
  uint8_t *src = malloc(n), *dst = malloc(n);
  double *raw = calloc((size_t)runs, sizeof *raw), *xfer = calloc((size_t)runs, sizeof *xfer);
  double *raw_cpu = calloc((size_t)runs, sizeof *raw), *xfer_cpu = calloc((size_t)runs, sizeof *xfer);
  if (!src || !dst || !raw || !xfer || !raw_cpu || !xfer_cpu) {
    fprintf(stderr, "bench_transfer: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < n; i++)
    src[i] = (uint8_t)(i * 131 + (i >> 12));
  memset(dst, 0, n);

  /* the raw stream: a writer thread, a connection made once */
  struct sockaddr_in addr;
  size_t piece = o.chunk_bytes; /* the raw stream moves the same pieces as the transfer's chunks */
  raw_writer w = {src, n, piece, listen_loopback(&addr)};
  int fd = w.listener < 0 ? -1 : socket(AF_INET, SOCK_STREAM, 0);
  pthread_t raw_th, xfer_th;
  if (fd < 0 || pthread_create(&raw_th, NULL, raw_write, &w) != 0 ||
      connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    perror("bench_transfer: raw stream");
    return 1;
  }

  /* the transfer: a server and a client, each with a ZeroMQ context of its own */
  char err[256];
  void *sctx = zmq_ctx_new(), *cctx = zmq_ctx_new();
  serving sv = {.s = sl_xfer_server_new(sctx, "tcp://127.0.0.1:*", err, sizeof err)};
  static const uint8_t one = 1;
  sl_xfer_seg seg[] = {{src, n}, {&one, 1}};
  if (!sv.s || sl_xfer_server_publish(sv.s, 1, &seg[0], 1, NULL, NULL) != 0 ||
      sl_xfer_server_publish(sv.s, 2, &seg[1], 1, NULL, NULL) != 0) {
    fprintf(stderr, "bench_transfer: %s\n", sv.s ? "cannot publish" : err);
    return 1;
  }
  atomic_init(&sv.stop, false);
  pthread_create(&xfer_th, NULL, serve, &sv);
  sl_xfer_client *c = sl_xfer_client_new(cctx, sl_xfer_server_endpoint(sv.s), &o, err, sizeof err);
  uint8_t tiny;
  size_t len;
  if (!c || sl_xfer_fetch(c, 2, &tiny, 1, &len, err, sizeof err) != 0) { /* connects */
    fprintf(stderr, "bench_transfer: %s\n", err);
    return 1;
  }

  printf("%.0f MB over 127.0.0.1, %d runs; transfer in chunks of %u KiB, %u in flight, %s allocator\n",
         n / MB, runs, o.chunk_bytes / 1024, o.window, plain ? "glibc's default" : "tuned");
  for (int r = 0; r < runs; r++) {
    for (int k = 0; k < 2; k++) {
      double cpu0 = cpu_s();
      if ((k == 0) == (r % 2 == 0)) {
        double t = raw_read(fd, dst, n, piece);
        raw_cpu[r] = cpu_s() - cpu0;
        if (t < 0 || (r == 0 && memcmp(dst, src, n) != 0)) {
          fprintf(stderr, "bench_transfer: the raw stream failed\n");
          return 1;
        }
        raw[r] = n / MB / t;
      } else {
        memset(dst, 0, 4096);
        double t0 = sl_bench_now();
        if (sl_xfer_fetch(c, 1, dst, n, &len, err, sizeof err) != 0 || len != n) {
          fprintf(stderr, "bench_transfer: %s\n", err);
          return 1;
        }
        xfer[r] = n / MB / (sl_bench_now() - t0);
        xfer_cpu[r] = cpu_s() - cpu0;
        if (r == 0 && memcmp(dst, src, n) != 0) {
          fprintf(stderr, "bench_transfer: the transfer brought other bytes\n");
          return 1;
        }
      }
    }
    printf("run %d: raw TCP %.0f MB/s, transfer %.0f MB/s (%.3f); CPU ms per 100 MB: raw %.1f, transfer %.1f\n",
           r + 1, raw[r], xfer[r], xfer[r] / raw[r], raw_cpu[r] * 1e3 * 100 * MB / n, xfer_cpu[r] * 1e3 * 100 * MB / n);
  }
  double raw_med = sl_bench_median(raw, runs), xfer_med = sl_bench_median(xfer, runs);
  double raw_cpu_med = sl_bench_median(raw_cpu, runs), xfer_cpu_med = sl_bench_median(xfer_cpu, runs);
  printf("median: raw TCP %.0f MB/s, transfer %.0f MB/s, ratio %.3f\n", raw_med, xfer_med, xfer_med / raw_med);
  printf("median CPU per 100 MB, all threads: raw TCP %.1f ms, transfer %.1f ms, ratio %.3f\n",
         raw_cpu_med * 1e3 * 100 * MB / n, xfer_cpu_med * 1e3 * 100 * MB / n, xfer_cpu_med / raw_cpu_med);

  if (write(fd, "q", 1) != 1)
    perror("bench_transfer");
  close(fd);
  pthread_join(raw_th, NULL);
  close(w.listener);
  atomic_store(&sv.stop, true);
  pthread_join(xfer_th, NULL);
  sl_xfer_client_free(c);
  sl_xfer_server_free(sv.s);
  zmq_ctx_term(cctx);
  zmq_ctx_term(sctx);
  free(src);
  free(dst);
  free(raw);
  free(xfer);
  free(raw_cpu);
  free(xfer_cpu);
  return 0;
}
