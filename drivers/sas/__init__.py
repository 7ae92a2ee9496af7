"""The casino floor system's link (SAS, gaming-machine role): ``codec`` (CRC-16/KERMIT, BCD, the
poll table and every frame), ``link`` (framing, NACK, implied ACK, chirp, link down; no I/O, time
passed in), ``wakeup`` (the ninth bit as parity marks), ``port`` (UART, byte-stream and pty
transports behind one interface, the reader thread, reopen with backoff). This package must never
know what a meter means to the table nor import from ``controller``.
"""
