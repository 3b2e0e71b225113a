// Signal numbers (NDB's GSNs) of the data path: client library <-> coordinator <->
// local_query, and the dictionary. Payload layouts are the structs of messages.h and
// docs/formats/kernel-protocol.md. Numbers are part of the wire protocol: never reuse
// one; add new signals at the end of their range.
//
// Thread-safety: constants; register_protocol_signal_names() is safe to call from any
// thread, any number of times.
#pragma once

#include "ndb-kernel/runtime/signal.h"

namespace duo::protocol {

using kernel::SignalId;

// Client library <-> coordinator (100..139).
inline constexpr SignalId kTcKeyReq = 100;      // one key operation of a transaction
inline constexpr SignalId kTcKeyConf = 101;     // results of an executed batch / commit
inline constexpr SignalId kTcCommitReq = 102;   // commit what was executed so far
inline constexpr SignalId kTcRollbackReq = 103; // abort the transaction
inline constexpr SignalId kScanTabReq = 110;    // start a scan of a whole table
inline constexpr SignalId kScanTabConf = 111;   // one batch of rows of one fragment
inline constexpr SignalId kScanTabRef = 112;    // the scan failed
inline constexpr SignalId kScanTabNextReq = 113;  // ask for the next batch / close
// Several small signals from one block to one block carried as one (NDB's
// PACKED_SIGNAL; packed_signals.h). Used client -> coordinator and coordinator <->
// local_query for batches of key operations.
inline constexpr SignalId kPackedSignals = 114;

// Coordinator <-> local_query (140..179).
inline constexpr SignalId kLqhKeyReq = 140;
inline constexpr SignalId kLqhKeyConf = 141;
inline constexpr SignalId kLqhKeyRef = 142;
inline constexpr SignalId kLqhCommitReq = 143;
inline constexpr SignalId kLqhCommitConf = 144;
inline constexpr SignalId kLqhAbortReq = 145;
inline constexpr SignalId kLqhAbortConf = 146;
inline constexpr SignalId kScanFragReq = 150;
inline constexpr SignalId kScanFragConf = 151;
inline constexpr SignalId kScanFragRef = 152;
inline constexpr SignalId kScanFragNextReq = 153;
// Lock-wait timer of local_query (to itself).
inline constexpr SignalId kLqhLockTimeout = 160;

// Dictionary (180..219).
inline constexpr SignalId kCreateTableReq = 180;  // client -> master dictionary
inline constexpr SignalId kCreateTableConf = 181;
inline constexpr SignalId kCreateTableRef = 182;
inline constexpr SignalId kDropTableReq = 183;
inline constexpr SignalId kDropTableConf = 184;
inline constexpr SignalId kDropTableRef = 185;
inline constexpr SignalId kGetTableReq = 186;     // client -> any dictionary
inline constexpr SignalId kGetTableConf = 187;
inline constexpr SignalId kGetTableRef = 188;
inline constexpr SignalId kListTablesReq = 189;
inline constexpr SignalId kListTablesConf = 190;
inline constexpr SignalId kSchemaEvent = 191;     // dictionary -> subscribed clients
// Replace a table's definition (indexes, name, SQL definition; same columns): client ->
// master dictionary. TableMsg; the table's version is the one the client changed.
inline constexpr SignalId kAlterTableReq = 192;
inline constexpr SignalId kAlterTableConf = 193;  // DictMsg: a = table id, b = new version
inline constexpr SignalId kAlterTableRef = 194;
inline constexpr SignalId kSchemaPrepareReq = 200;  // master -> every dictionary
inline constexpr SignalId kSchemaPrepareConf = 201;
inline constexpr SignalId kSchemaPrepareRef = 202;
inline constexpr SignalId kSchemaCommitReq = 203;
inline constexpr SignalId kSchemaCommitConf = 204;
inline constexpr SignalId kTableAddReq = 205;     // dictionary -> local blocks
inline constexpr SignalId kTableAddConf = 206;
inline constexpr SignalId kTableDropReq = 207;
inline constexpr SignalId kTableDropConf = 208;
inline constexpr SignalId kSubscribeSchemaReq = 209;  // client -> dictionary

// Membership (220..259).
// A node failed (word 0: the node id). For a data node: delivered by the membership
// block once the survivors agreed (ndb-kernel/membership); for an API node: by the
// node's transport when its link went down. Receivers abort / forget what it owned.
inline constexpr SignalId kNodeFailRep = 220;
// A data node is stopping on purpose (w0: its node id): sent by the stopping node's
// process to every peer's distribution block just before its links close.
inline constexpr SignalId kNodeStoppingRep = 221;

// Global checkpoints (280..299): the distribution block's GCP protocol (NDB's DBDIH),
// word 0 = the GCI concerned (docs/formats/kernel-protocol.md "Global checkpoints").
inline constexpr SignalId kGcpPrepareReq = 280;    // master -> every distribution
inline constexpr SignalId kGcpPrepareConf = 281;
inline constexpr SignalId kGcpBlockReq = 282;      // distribution -> local coordinator
inline constexpr SignalId kGcpBlockConf = 283;
inline constexpr SignalId kGcpCommitReq = 284;     // master -> every distribution
inline constexpr SignalId kGcpSwitchReq = 285;     // distribution -> local coordinator
inline constexpr SignalId kGcpNoMoreTrans = 286;   // coordinator: no commit of GCI left
inline constexpr SignalId kGcpCommitConf = 287;
inline constexpr SignalId kGcpSaveReq = 288;       // master -> distribution -> local_query
inline constexpr SignalId kGcpSaveConf = 289;
inline constexpr SignalId kGcpCompleteRep = 290;   // master -> every distribution
inline constexpr SignalId kGcpTimer = 291;         // master's own tick
inline constexpr SignalId kGcpCompleteConf = 292;  // the node's sysfile records the GCI

// Local checkpoints and system restart (300..329).
inline constexpr SignalId kLcpStartReq = 300;    // -> local_query: checkpoint every fragment now
inline constexpr SignalId kLcpStartConf = 301;   // w0 lcp id, w1 rows written
inline constexpr SignalId kLqhRestoreReq = 302;  // distribution -> local_query: w0 restore GCI
inline constexpr SignalId kLqhRestoreConf = 303; // w0 restore GCI, w1 rows, w2 ErrorCode
inline constexpr SignalId kDictRestoreReq = 304; // distribution -> dictionary: read schema
inline constexpr SignalId kDictRestoreConf = 305;
inline constexpr SignalId kRestartInfoRep = 306; // distribution -> master: w0 local GCI
inline constexpr SignalId kRestartGciRep = 307;  // master -> every distribution: w0 GCI
inline constexpr SignalId kRestartDoneRep = 308; // distribution -> master
inline constexpr SignalId kClusterStartedRep = 309;  // master -> every distribution
inline constexpr SignalId kLqhContinue = 310;    // local_query to itself: next work slice
inline constexpr SignalId kRestartTimer = 311;   // distribution to itself: repeat a report

// File system (260..279): requests to the node's file system block (NDB's NDBFS),
// answered to the sender. Layouts: ndb-kernel/fs/fs_messages.h.
inline constexpr SignalId kFsOpenReq = 260;
inline constexpr SignalId kFsOpenConf = 261;
inline constexpr SignalId kFsRef = 262;  // any request failed
inline constexpr SignalId kFsWriteReq = 263;
inline constexpr SignalId kFsWriteConf = 264;
inline constexpr SignalId kFsReadReq = 265;
inline constexpr SignalId kFsReadConf = 266;
inline constexpr SignalId kFsSyncReq = 267;
inline constexpr SignalId kFsSyncConf = 268;
inline constexpr SignalId kFsCloseReq = 269;
inline constexpr SignalId kFsCloseConf = 270;
inline constexpr SignalId kFsRemoveReq = 271;
inline constexpr SignalId kFsRemoveConf = 272;
inline constexpr SignalId kFsListReq = 273;
inline constexpr SignalId kFsListConf = 274;

// Membership: heartbeats, agreed node failure, arbitration (400..429; NDB's QMGR;
// docs/formats/kernel-protocol.md "Membership"). Node sets travel as a bitmask of
// kNodeSetWords words (bit n = node id n); layouts in membership/membership_messages.h.
inline constexpr SignalId kHeartbeat = 400;      // w0 sender: to the right ring neighbour
inline constexpr SignalId kFailRep = 401;        // -> president: w0 suspected node, w1 reporter
// President -> survivors: w0 round, w1 president, w2.. failed set.
inline constexpr SignalId kPrepFailReq = 402;
inline constexpr SignalId kPrepFailConf = 403;   // w0 round, w1 answering node
// President -> survivors and failed nodes: as PREP_FAILREQ.
inline constexpr SignalId kCommitFailReq = 404;
inline constexpr SignalId kCommitFailConf = 405;  // w0 round, w1 answering node
// President -> survivors: w0 round, w1 president, w2 reason, w3 lost node group.
inline constexpr SignalId kClusterShutdownOrd = 406;
// President -> arbitrator: w0 round, w1 president, w2.. survivors, w10.. failed.
inline constexpr SignalId kArbitReq = 407;
inline constexpr SignalId kArbitConf = 408;       // arbitrator -> president: w0 round (granted)
inline constexpr SignalId kArbitRef = 409;        // arbitrator -> president: w0 round, w1 reason
inline constexpr SignalId kMembershipTick = 410;  // membership to itself: heartbeat period
inline constexpr SignalId kPrepFailTimeout = 411;  // membership to itself: w0 round
inline constexpr SignalId kArbitTimeout = 412;     // membership to itself: w0 round
inline constexpr SignalId kLinkDownRep = 413;      // the node's transport -> membership: w0 node
inline constexpr SignalId kFailAck = 414;          // FAIL_REP receiver -> reporter: w0 its node

// Node failure handling: takeover (430..469; docs/formats/kernel-protocol.md
// "Node failure: takeover").
// Takeover coordinator -> every live local_query instance: w0 = the dead node id; "which
// transactions coordinated by that node do you hold?".
inline constexpr SignalId kLqhTransReq = 430;
// local_query -> the asker: w0 dead node, w1 = 1 on the instance's last answer, w2 =
// entries; section = entries of (u64 transid, u32 commit GCI; 0 = prepared, not
// committed here).
inline constexpr SignalId kLqhTransConf = 431;
// Coordinator -> its local distribution block: w0 = the dead node whose transactions
// are now all committed or aborted everywhere (the GCP may complete again).
inline constexpr SignalId kTakeoverDoneRep = 432;
// New GCP master -> every live distribution block: "where are you in the GCP?"
inline constexpr SignalId kMasterGcpReq = 433;
// w0 current GCI (commits use it), w1 GCI prepared for (GCP_PREPAREREQ seen, no
// GCP_COMMITREQ yet; 0 if none), w2 last GCI recorded complete.
inline constexpr SignalId kMasterGcpConf = 434;

// Registers the names above for logs (idempotent).
void register_protocol_signal_names();

}  // namespace duo::protocol
