/*
 * One side of a partition transfer, as its own process, for the tests that
 * put the two sides on different hosts (tests/netns_xfer.sh: network
 * namespaces joined by a shaped link). Each mode has a raw TCP twin, so a
 * test can hold the transfer's rate against a plain stream over the same
 * link.
 *
 *   xfer_peer serve ENDPOINT MB        serves partition 1 (MB megabytes of
 *                                      a known pattern) until SIGTERM
 *   xfer_peer fetch ENDPOINT MB RUNS [TIMEOUT_MS]
 *                                      fetches it RUNS times, checks every
 *                                      byte, prints "rate MB_S" (median)
 *   xfer_peer serve-raw IP PORT MB     writes MB megabytes to each
 *                                      connection, until SIGTERM
 *   xfer_peer fetch-raw IP PORT MB RUNS
 *                                      reads them RUNS times, prints
 *                                      "rate MB_S" (median)
 *
 * exit: 0 done; 1 the transfer failed (why on stderr); 3 the fetch gave
 * up after TIMEOUT_MS without a chunk (a cut link); 2 bad usage.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "transport/xfer.h"

#define MB 1e6

static volatile sig_atomic_t stopping;

static void on_term(int sig)
{
  (void)sig;
  stopping = 1;
}

static uint8_t pattern_at(size_t i)
{
  return (uint8_t)(i * 131 + (i >> 12));
}

static uint8_t *pattern(size_t n)
{
  uint8_t *b = malloc(n ? n : 1);
  for (size_t i = 0; b && i < n; i++)
    b[i] = pattern_at(i);
  return b;
}

static bool pattern_ok(const uint8_t *b, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (b[i] != pattern_at(i))
      return false;
  return true;
}

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int by_value(const void *x, const void *y)
{
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* The median of the runs' rates: one slow run (a scheduling hiccup on a
 * busy machine) does not move it. */
static void print_rate(double *rates, int runs)
{
  qsort(rates, (size_t)runs, sizeof *rates, by_value);
  double mid = runs % 2 ? rates[runs / 2] : (rates[runs / 2 - 1] + rates[runs / 2]) / 2;
  printf("rate %.1f\n", mid);
}

static int serve(const char *endpoint, size_t n)
{
  char err[256];
  uint8_t *src = pattern(n);
  void *zctx = zmq_ctx_new();
  sl_xfer_server *s = src ? sl_xfer_server_new(zctx, endpoint, err, sizeof err) : NULL;
  sl_xfer_seg seg = {src, n};
  if (!s || sl_xfer_server_publish(s, 1, &seg, 1, NULL, NULL) != 0) {
    fprintf(stderr, "xfer_peer: cannot serve at %s: %s\n", endpoint, s ? "publish failed" : err);
    return 1;
  }
  while (!stopping) {
    int rc = sl_xfer_server_serve(s, 50, err, sizeof err);
    if (rc < 0 && rc != SL_EINTR) {
      fprintf(stderr, "xfer_peer: %s\n", err);
      break;
    }
  }
  sl_xfer_server_free(s);
  zmq_ctx_term(zctx);
  free(src);
  return 0;
}

static int fetch(const char *endpoint, size_t n, int runs, int timeout_ms)
{
  char err[256];
  sl_xfer_opts o;
  sl_xfer_opts_default(&o);
  if (timeout_ms > 0)
    o.timeout_ms = timeout_ms;
  uint8_t *dst = malloc(n ? n : 1);
  double *rates = calloc((size_t)runs, sizeof *rates);
  void *zctx = zmq_ctx_new();
  sl_xfer_client *c = dst && rates ? sl_xfer_client_new(zctx, endpoint, &o, err, sizeof err) : NULL;
  int status = c ? 0 : 1;
  if (!c)
    fprintf(stderr, "xfer_peer: no client for %s: %s\n", endpoint, dst && rates ? err : "out of memory");
  for (int r = 0; status == 0 && r < runs; r++) {
    size_t len = 0;
    memset(dst, 0, n);
    double t0 = now_s();
    int rc = sl_xfer_fetch(c, 1, dst, n, &len, err, sizeof err);
    double t = now_s() - t0;
    if (rc != 0) {
      fprintf(stderr, "xfer_peer: fetch %d of %d: %s\n", r + 1, runs, err);
      status = rc == SL_EIO ? 3 : 1;
    } else if (len != n || !pattern_ok(dst, n)) {
      fprintf(stderr, "xfer_peer: fetch %d of %d brought other bytes (%zu of %zu)\n", r + 1, runs, len, n);
      status = 1;
    } else {
      rates[r] = n / MB / t;
    }
  }
  if (status == 0)
    print_rate(rates, runs);
  sl_xfer_client_free(c);
  zmq_ctx_term(zctx);
  free(dst);
  free(rates);
  return status;
}

static int raw_socket(const char *ip, int port, struct sockaddr_in *a)
{
  memset(a, 0, sizeof *a);
  a->sin_family = AF_INET;
  a->sin_port = htons((uint16_t)port);
  if (inet_pton(AF_INET, ip, &a->sin_addr) != 1) {
    fprintf(stderr, "xfer_peer: not an IPv4 address: %s\n", ip);
    return -1;
  }
  return socket(AF_INET, SOCK_STREAM, 0);
}

static bool write_all(int fd, const uint8_t *b, size_t n)
{
  for (size_t off = 0; off < n;) {
    ssize_t k = write(fd, b + off, n - off);
    if (k <= 0)
      return false;
    off += (size_t)k;
  }
  return true;
}

static int serve_raw(const char *ip, int port, size_t n)
{
  struct sockaddr_in a;
  int one = 1, fd = raw_socket(ip, port, &a);
  uint8_t *src = pattern(n);
  if (fd < 0 || !src || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 4) != 0) {
    perror("xfer_peer: serve-raw");
    return 1;
  }
  while (!stopping) {
    int c = accept(fd, NULL, NULL);
    if (c < 0)
      continue; /* SIGTERM interrupts it */
    (void)write_all(c, src, n);
    close(c);
  }
  close(fd);
  free(src);
  return 0;
}

static int fetch_raw(const char *ip, int port, size_t n, int runs)
{
  uint8_t *dst = malloc(n ? n : 1);
  double *rates = calloc((size_t)runs, sizeof *rates);
  if (!dst || !rates) {
    fprintf(stderr, "xfer_peer: out of memory\n");
    return 1;
  }
  for (int r = 0; r < runs; r++) {
    struct sockaddr_in a;
    int fd = raw_socket(ip, port, &a);
    size_t off = 0;
    double t0 = now_s();
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
      perror("xfer_peer: fetch-raw");
      return 1;
    }
    for (ssize_t k; off < n && (k = read(fd, dst + off, n - off)) > 0;)
      off += (size_t)k;
    rates[r] = n / MB / (now_s() - t0);
    close(fd);
    if (off != n || !pattern_ok(dst, n)) {
      fprintf(stderr, "xfer_peer: raw read %d of %d brought other bytes (%zu of %zu)\n", r + 1, runs, off, n);
      return 1;
    }
  }
  print_rate(rates, runs);
  free(dst);
  free(rates);
  return 0;
}

static int usage(void)
{
  fprintf(stderr, "usage: xfer_peer serve ENDPOINT MB | fetch ENDPOINT MB RUNS [TIMEOUT_MS]\n"
                  "       xfer_peer serve-raw IP PORT MB | fetch-raw IP PORT MB RUNS\n");
  return 2;
}

int main(int argc, char **argv)
{
  struct sigaction sa = {.sa_handler = on_term};
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  if (argc < 4)
    return usage();
  const char *mode = argv[1];
  bool raw = strncmp(mode, "serve-raw", 10) == 0 || strncmp(mode, "fetch-raw", 10) == 0;
  int base = raw ? 4 : 3; /* where MB is */
  if (argc <= base)
    return usage();
  double mb = atof(argv[base]);
  int runs = argc > base + 1 ? atoi(argv[base + 1]) : 1;
  int port = raw ? atoi(argv[3]) : 0;
  if (!(mb >= 0) || mb > 4096 || runs < 1 || runs > 100 || (raw && (port < 1 || port > 65535)))
    return usage();
  size_t n = (size_t)(mb * MB);
  if (strcmp(mode, "serve") == 0)
    return serve(argv[2], n);
  if (strcmp(mode, "fetch") == 0)
    return fetch(argv[2], n, runs, argc > 5 ? atoi(argv[5]) : 0);
  if (strcmp(mode, "serve-raw") == 0)
    return serve_raw(argv[2], port, n);
  if (strcmp(mode, "fetch-raw") == 0)
    return fetch_raw(argv[2], port, n, runs);
  return usage();
}
