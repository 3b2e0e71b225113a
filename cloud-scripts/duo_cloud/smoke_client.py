#!/usr/bin/env python3
"""A minimal MySQL-protocol client in the Python standard library, for the installer's
smoke query: a fresh cloud VM has python3 but no MySQL client, and the tarball ships none.
It speaks the 4.1 protocol without TLS: handshake v10, mysql_native_password (or an empty
password under any plugin, including an auth switch and caching_sha2_password's fast
path), COM_QUERY with text result sets. Copied to the sqld VM and run there:

    python3 smoke_client.py HOST PORT USER 'SQL' ['SQL' ...]

prints the rows of the last statement, tab-separated; exit 0, or 1 with the server's
error. Not a general client: no TLS, no prepared statements, no multi-results.
"""

import hashlib
import socket
import struct
import sys

CLIENT_LONG_PASSWORD = 0x1
CLIENT_PROTOCOL_41 = 0x200
CLIENT_TRANSACTIONS = 0x2000
CLIENT_SECURE_CONNECTION = 0x8000
CLIENT_PLUGIN_AUTH = 0x80000
MAX_PACKET_BYTES = 1 << 24


class MySqlError(Exception):
    pass


class Connection:
    def __init__(self, host, port, user, password="", timeout_s=30):
        self.sock = socket.create_connection((host, int(port)), timeout=timeout_s)
        self.seq = 0
        self._handshake(user, password)

    def _read_exact(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise MySqlError("server closed the connection")
            data += chunk
        return data

    def read_packet(self):
        header = self._read_exact(4)
        length = header[0] | header[1] << 8 | header[2] << 16
        self.seq = (header[3] + 1) & 0xff
        return self._read_exact(length)

    def write_packet(self, payload):
        if len(payload) >= MAX_PACKET_BYTES - 1:
            raise MySqlError("statement too long for the smoke client")
        self.sock.sendall(struct.pack("<I", len(payload))[:3] + bytes([self.seq]) + payload)
        self.seq = (self.seq + 1) & 0xff

    @staticmethod
    def _scramble(password, salt):
        if not password:
            return b""
        stage1 = hashlib.sha1(password.encode()).digest()
        stage2 = hashlib.sha1(stage1).digest()
        mix = hashlib.sha1(salt + stage2).digest()
        return bytes(a ^ b for a, b in zip(stage1, mix))

    def _handshake(self, user, password):
        packet = self.read_packet()
        if packet[0] == 0xff:
            raise MySqlError(error_text(packet))
        pos = packet.index(b"\0", 1) + 1 + 4  # protocol, server version, connection id
        salt = packet[pos:pos + 8]
        pos += 8 + 1 + 2 + 1 + 2 + 2  # salt part 1, filler, capabilities, charset, status
        auth_data_len = packet[pos]
        pos += 1 + 10  # that length, reserved
        part2_len = max(13, auth_data_len - 8)
        salt += packet[pos:pos + part2_len - 1]  # without its terminating NUL
        pos += part2_len
        plugin_end = packet.find(b"\0", pos)
        plugin = packet[pos:plugin_end if plugin_end >= 0 else len(packet)].decode() or \
            "mysql_native_password"
        caps = (CLIENT_LONG_PASSWORD | CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS |
                CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH)
        auth = self._scramble(password, salt) if plugin == "mysql_native_password" else b""
        if password and plugin != "mysql_native_password":
            plugin, auth = "mysql_native_password", self._scramble(password, salt)
        self.write_packet(struct.pack("<IIB", caps, MAX_PACKET_BYTES, 45) + b"\0" * 23 +
                          user.encode() + b"\0" + bytes([len(auth)]) + auth +
                          plugin.encode() + b"\0")
        while True:
            reply = self.read_packet()
            if reply[0] == 0x00:
                return
            if reply[0] == 0xff:
                raise MySqlError(error_text(reply))
            if reply[0] == 0xfe:  # auth switch: plugin name, then its salt
                end = reply.index(b"\0", 1)
                new_plugin, new_salt = reply[1:end].decode(), reply[end + 1:].rstrip(b"\0")
                self.write_packet(self._scramble(password, new_salt)
                                  if new_plugin == "mysql_native_password" else b"")
            elif reply[0] == 0x01 and reply[1:2] == b"\x03":
                continue  # caching_sha2_password fast authentication succeeded; OK follows
            else:
                raise MySqlError("authentication needs more than the smoke client speaks "
                                 "(use an account with an empty or native password)")

    def query(self, sql):
        """Runs one statement; returns its rows (lists of str or None), [] for none."""
        self.seq = 0
        self.write_packet(b"\x03" + sql.encode())
        first = self.read_packet()
        if first[0] == 0xff:
            raise MySqlError(error_text(first))
        if first[0] == 0x00:
            return []
        columns, _ = lenenc_int(first, 0)
        for _ in range(columns):
            self.read_packet()
        self.read_packet()  # EOF after the column definitions
        rows = []
        while True:
            packet = self.read_packet()
            if packet[0] == 0xfe and len(packet) < 9:
                return rows
            if packet[0] == 0xff:
                raise MySqlError(error_text(packet))
            row, pos = [], 0
            for _ in range(columns):
                if packet[pos] == 0xfb:
                    row.append(None)
                    pos += 1
                    continue
                length, pos = lenenc_int(packet, pos)
                row.append(packet[pos:pos + length].decode(errors="replace"))
                pos += length
            rows.append(row)

    def close(self):
        try:
            self.seq = 0
            self.write_packet(b"\x01")
        finally:
            self.sock.close()


def lenenc_int(data, pos):
    first = data[pos]
    if first < 0xfb:
        return first, pos + 1
    width = {0xfc: 2, 0xfd: 3, 0xfe: 8}[first]
    return int.from_bytes(data[pos + 1:pos + 1 + width], "little"), pos + 1 + width


def error_text(packet):
    code = struct.unpack("<H", packet[1:3])[0]
    message = packet[3:]
    if message[:1] == b"#":
        message = message[6:]
    return "ERROR %d: %s" % (code, message.decode(errors="replace"))


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 64
    host, port, user, statements = argv[0], argv[1], argv[2], argv[3:]
    try:
        connection = Connection(host, port, user)
        rows = []
        for sql in statements:
            rows = connection.query(sql)
        connection.close()
    except (OSError, MySqlError) as error:
        print("smoke query failed: %s" % error, file=sys.stderr)
        return 1
    for row in rows:
        print("\t".join("NULL" if v is None else v for v in row))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
