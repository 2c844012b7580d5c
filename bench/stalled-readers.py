"""Readers that send `GET <path>` and then never read, with a small receive window.

Usage: stalled-readers.py HOST PORT PATH COUNT STAGGER_MILLIS RECEIVE_WINDOW_BYTES [tls]

With `tls`, each reader finishes a TLS handshake (any certificate accepted) before its request.

Waits for a line on its standard input, then opens COUNT connections, one every STAGGER_MILLIS, each with SO_RCVBUF set before it connects (so
the TCP window the server sees stays small: its writes fill the socket at once and wait for a drain
that never comes), sends one request on each, prints `ready` once every request is sent, and keeps
the sockets open, never reading, until its standard input closes.
"""
import socket
import ssl
import sys
import time

host, port, path, count, stagger, window = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
tls = None
if sys.argv[7:] == ["tls"]:
    tls = ssl.create_default_context()
    tls.check_hostname = False
    tls.verify_mode = ssl.CERT_NONE
held = []
sys.stdin.readline()
for i in range(count):
    if i > 0 and stagger > 0:
        time.sleep(stagger / 1000)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, window)
    s.connect((host, port))
    if tls is not None:
        s = tls.wrap_socket(s, server_hostname=host)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    held.append(s)
print("ready", flush=True)
sys.stdin.read()
