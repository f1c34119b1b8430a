#!/usr/bin/env python3
"""Measures, on this machine, the per-byte costs that profiles/*.ini take
from here: what a Python operator pays to have its data serialized and
moved across a process boundary, as a Python worker of a JVM system (a
PySpark or PyFlink UDF) exchanges every row with its JVM over a local
socket, against a plain in-memory copy.

    python3 bench/system_costs.py [--frame-mb 9.6] [--rounds 20]

Prints one line per cost, the median of the rounds, in MB/s. Standard
library only. A frame of 9.6 MB is one video clip of the paper's Fig. 7b
(16 frames of 224 x 224 x 3 float32 values).
"""
import argparse
import os
import pickle
import socket
import statistics
import threading
import time


def median_rate(nbytes, seconds):
    return nbytes / statistics.median(seconds) / 1e6


def time_copy(frame, rounds):
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        bytearray(frame)  # one copy of every byte
        times.append(time.perf_counter() - t)
    return times


def time_pickle(frame, rounds):
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        pickle.loads(pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL))
        times.append(time.perf_counter() - t)
    return times


def recv_exactly(conn, n):
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = conn.recv_into(view[got:], n - got)
        if k == 0:
            raise ConnectionError("peer closed")
        got += k
    return bytes(buf)


def echo_server(listener, rounds):
    conn, _ = listener.accept()
    with conn:
        for _ in range(rounds):
            n = int.from_bytes(recv_exactly(conn, 8), "little")
            obj = pickle.loads(recv_exactly(conn, n))
            out = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
            conn.sendall(len(out).to_bytes(8, "little") + out)


def time_socket_round_trip(frame, rounds):
    """A frame to another process and back, pickled each way: what a row
    costs to enter a Python worker and leave it again. The other end is a
    forked process, so the two sides do not share an interpreter."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    pid = os.fork()
    if pid == 0:
        try:
            echo_server(listener, rounds)
        finally:
            os._exit(0)
    listener.close()
    times = []
    with socket.create_connection(("127.0.0.1", port)) as conn:
        for _ in range(rounds):
            t = time.perf_counter()
            data = pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL)
            conn.sendall(len(data).to_bytes(8, "little") + data)
            n = int.from_bytes(recv_exactly(conn, 8), "little")
            pickle.loads(recv_exactly(conn, n))
            times.append(time.perf_counter() - t)
    os.waitpid(pid, 0)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frame-mb", type=float, default=9.6)
    ap.add_argument("--rounds", type=int, default=20)
    a = ap.parse_args()
    n = int(a.frame_mb * 1e6)
    frame = os.urandom(n)
    print(f"frame {n} bytes, median of {a.rounds} rounds, this machine")
    print(f"copy              {median_rate(n, time_copy(frame, a.rounds)):10.0f} MB/s  (one in-memory copy)")
    print(f"pickle round trip {median_rate(n, time_pickle(frame, a.rounds)):10.0f} MB/s  (dumps + loads)")
    # the round trip moves the frame twice (in and out): per byte moved
    rt = time_socket_round_trip(frame, a.rounds)
    print(f"socket crossing   {median_rate(2 * n, rt):10.0f} MB/s  (per byte across the process boundary, "
          f"pickled, sent, received and unpickled; a row in and its result out cross twice)")


if __name__ == "__main__":
    main()
