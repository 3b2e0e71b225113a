// Numbers of the MySQL client/server protocol (v10, "protocol 41"): capability flags,
// server status flags, command bytes, column types and flags, and the error numbers the
// protocol layer itself raises. Values are those of MySQL's include/mysql_com.h and
// include/field_types.h; the names follow the MySQL documentation so that a reader can
// look them up, in our lower-camel constant spelling.
//
// Thread-safety: constants only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace duo::sql::protocol {

// Capability flags (Protocol::CapabilityFlags). CLIENT_LONG_PASSWORD doubles as
// "this is a MySQL (not MariaDB) server" for MariaDB's Connector/C, which then does
// not look for MariaDB's extended capabilities in the handshake filler.
inline constexpr uint32_t kClientLongPassword = 1u << 0;
inline constexpr uint32_t kClientFoundRows = 1u << 1;
inline constexpr uint32_t kClientLongFlag = 1u << 2;
inline constexpr uint32_t kClientConnectWithDb = 1u << 3;
inline constexpr uint32_t kClientNoSchema = 1u << 4;
inline constexpr uint32_t kClientCompress = 1u << 5;
inline constexpr uint32_t kClientOdbc = 1u << 6;
inline constexpr uint32_t kClientLocalFiles = 1u << 7;
inline constexpr uint32_t kClientIgnoreSpace = 1u << 8;
inline constexpr uint32_t kClientProtocol41 = 1u << 9;
inline constexpr uint32_t kClientInteractive = 1u << 10;
inline constexpr uint32_t kClientSsl = 1u << 11;
inline constexpr uint32_t kClientIgnoreSigpipe = 1u << 12;
inline constexpr uint32_t kClientTransactions = 1u << 13;
inline constexpr uint32_t kClientReserved = 1u << 14;
inline constexpr uint32_t kClientSecureConnection = 1u << 15;
inline constexpr uint32_t kClientMultiStatements = 1u << 16;
inline constexpr uint32_t kClientMultiResults = 1u << 17;
inline constexpr uint32_t kClientPsMultiResults = 1u << 18;
inline constexpr uint32_t kClientPluginAuth = 1u << 19;
inline constexpr uint32_t kClientConnectAttrs = 1u << 20;
inline constexpr uint32_t kClientPluginAuthLenencClientData = 1u << 21;
inline constexpr uint32_t kClientCanHandleExpiredPasswords = 1u << 22;
inline constexpr uint32_t kClientSessionTrack = 1u << 23;
inline constexpr uint32_t kClientDeprecateEof = 1u << 24;

// What duo_sqld offers. Local files: LOAD DATA LOCAL INFILE, refused unless the
// server's local_infile is ON (MySQL 8.0's default is OFF) and the client enabled it.
// Not offered: compression (not implemented), session tracking, query attributes. kClientSsl is added only when a TLS context is configured.
inline constexpr uint32_t kServerCapabilities =
    kClientLongPassword | kClientFoundRows | kClientLongFlag | kClientConnectWithDb | kClientLocalFiles |
    kClientNoSchema | kClientOdbc | kClientIgnoreSpace | kClientProtocol41 | kClientInteractive |
    kClientIgnoreSigpipe | kClientTransactions | kClientReserved | kClientSecureConnection |
    kClientMultiStatements | kClientMultiResults | kClientPsMultiResults | kClientPluginAuth |
    kClientConnectAttrs | kClientPluginAuthLenencClientData | kClientCanHandleExpiredPasswords |
    kClientDeprecateEof;

// Server status flags carried by OK and EOF packets.
inline constexpr uint16_t kServerStatusInTrans = 0x0001;
inline constexpr uint16_t kServerStatusAutocommit = 0x0002;
inline constexpr uint16_t kServerMoreResultsExists = 0x0008;
inline constexpr uint16_t kServerStatusNoGoodIndexUsed = 0x0010;
inline constexpr uint16_t kServerStatusNoIndexUsed = 0x0020;
inline constexpr uint16_t kServerStatusCursorExists = 0x0040;
inline constexpr uint16_t kServerStatusLastRowSent = 0x0080;
inline constexpr uint16_t kServerStatusDbDropped = 0x0100;
inline constexpr uint16_t kServerStatusNoBackslashEscapes = 0x0200;
inline constexpr uint16_t kServerStatusMetadataChanged = 0x0400;
inline constexpr uint16_t kServerQueryWasSlow = 0x0800;
inline constexpr uint16_t kServerPsOutParams = 0x1000;
inline constexpr uint16_t kServerStatusInTransReadonly = 0x2000;
inline constexpr uint16_t kServerSessionStateChanged = 0x4000;

// Command bytes (first byte of a command-phase packet).
enum class Command : uint8_t {
  kSleep = 0x00,
  kQuit = 0x01,
  kInitDb = 0x02,
  kQuery = 0x03,
  kFieldList = 0x04,
  kCreateDb = 0x05,
  kDropDb = 0x06,
  kRefresh = 0x07,
  kShutdown = 0x08,
  kStatistics = 0x09,
  kProcessInfo = 0x0a,
  kConnect = 0x0b,
  kProcessKill = 0x0c,
  kDebug = 0x0d,
  kPing = 0x0e,
  kTime = 0x0f,
  kDelayedInsert = 0x10,
  kChangeUser = 0x11,
  kBinlogDump = 0x12,
  kTableDump = 0x13,
  kConnectOut = 0x14,
  kRegisterSlave = 0x15,
  kStmtPrepare = 0x16,
  kStmtExecute = 0x17,
  kStmtSendLongData = 0x18,
  kStmtClose = 0x19,
  kStmtReset = 0x1a,
  kSetOption = 0x1b,
  kStmtFetch = 0x1c,
  kDaemon = 0x1d,
  kBinlogDumpGtid = 0x1e,
  kResetConnection = 0x1f,
};

// Column / parameter types (enum_field_types).
enum class FieldType : uint8_t {
  kDecimal = 0,
  kTiny = 1,
  kShort = 2,
  kLong = 3,
  kFloat = 4,
  kDouble = 5,
  kNull = 6,
  kTimestamp = 7,
  kLongLong = 8,
  kInt24 = 9,
  kDate = 10,
  kTime = 11,
  kDateTime = 12,
  kYear = 13,
  kNewDate = 14,
  kVarchar = 15,
  kBit = 16,
  kTimestamp2 = 17,
  kDateTime2 = 18,
  kTime2 = 19,
  kJson = 245,
  kNewDecimal = 246,
  kEnum = 247,
  kSet = 248,
  kTinyBlob = 249,
  kMediumBlob = 250,
  kLongBlob = 251,
  kBlob = 252,
  kVarString = 253,
  kString = 254,
  kGeometry = 255,
};

// Column definition flags.
inline constexpr uint16_t kNotNullFlag = 1;
inline constexpr uint16_t kPriKeyFlag = 2;
inline constexpr uint16_t kUniqueKeyFlag = 4;
inline constexpr uint16_t kMultipleKeyFlag = 8;
inline constexpr uint16_t kBlobFlag = 16;
inline constexpr uint16_t kUnsignedFlag = 32;
inline constexpr uint16_t kZerofillFlag = 64;
inline constexpr uint16_t kBinaryFlag = 128;
inline constexpr uint16_t kEnumFlag = 256;
inline constexpr uint16_t kAutoIncrementFlag = 512;
inline constexpr uint16_t kTimestampFlag = 1024;
inline constexpr uint16_t kSetFlag = 2048;
inline constexpr uint16_t kNumFlag = 32768;

// Character sets (collation ids) used in handshakes and column definitions.
inline constexpr uint8_t kCharsetUtf8mb4GeneralCi = 45;
inline constexpr uint16_t kCharsetUtf8mb4 = 45;
inline constexpr uint16_t kCharsetBinary = 63;

// First bytes that identify a response packet.
inline constexpr uint8_t kOkHeader = 0x00;
inline constexpr uint8_t kEofHeader = 0xfe;
inline constexpr uint8_t kErrHeader = 0xff;
inline constexpr uint8_t kAuthMoreDataHeader = 0x01;
inline constexpr uint8_t kAuthSwitchHeader = 0xfe;

// Protocol-layer errors (MySQL server error numbers; SQLSTATEs from the manual).
inline constexpr uint16_t kErConCount = 1040;                 // Too many connections, 08004
inline constexpr uint16_t kErHandshake = 1043;                // Bad handshake, 08S01
inline constexpr uint16_t kErAccessDenied = 1045;             // 28000
inline constexpr uint16_t kErNoDb = 1046;                     // 3D000
inline constexpr uint16_t kErUnknownCom = 1047;               // 08S01
inline constexpr uint16_t kErBadDb = 1049;                    // 42000
inline constexpr uint16_t kErUnknownError = 1105;             // HY000
inline constexpr uint16_t kErWrongValueForVar = 1231;         // 42000
inline constexpr uint16_t kErNetPacketTooLarge = 1153;        // 08S01
inline constexpr uint16_t kErNetReadError = 1158;             // 08S01
inline constexpr uint16_t kErNetPacketsOutOfOrder = 1156;     // 08S01
inline constexpr uint16_t kErWrongArguments = 1210;           // HY000
inline constexpr uint16_t kErUnknownStmtHandler = 1243;       // HY000
inline constexpr uint16_t kErMalformedPacket = 1835;          // HY000
inline constexpr uint16_t kErQueryInterrupted = 1317;         // 70100
inline constexpr uint16_t kErSecureTransportRequired = 3159;  // HY000

// Protocol sizes.
inline constexpr size_t kPacketHeaderBytes = 4;
// A payload of this many bytes (or more) is split: a packet of exactly 2^24-1 bytes
// says "more follows", and the logical packet ends with a shorter one (maybe empty).
inline constexpr size_t kPacketPayloadBytesMax = (1u << 24) - 1;
// Nonce ("auth plugin data") length of the handshake: 8 + 12 bytes.
inline constexpr size_t kScrambleBytes = 20;

}  // namespace duo::sql::protocol
