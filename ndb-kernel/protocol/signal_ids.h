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
// master -> every distribution: w0 GCI, w1 a node recoverable from it (0: none).
inline constexpr SignalId kGcpCompleteRep = 290;
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
// Page IO straight into / out of a page-cache frame (same process): the request names the
// frame's memory, no section carries the bytes. Not ordered with the handle's other
// requests (fs_messages.h, "Page IO").
inline constexpr SignalId kFsPageReadReq = 275;
inline constexpr SignalId kFsPageWriteReq = 276;
inline constexpr SignalId kFsPageConf = 277;  // answers both; failures are FS_REF
// FS_ALLOCREQ: create a file and
// allocate it to a size (fs/fs_messages.h FsAllocReq).
inline constexpr SignalId kFsAllocReq = 278;
inline constexpr SignalId kFsAllocConf = 279;

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

// Node restart (470..509; docs/formats/kernel-protocol.md "Node restart"). S is the
// starting node throughout; the master is the distribution (DIH) master.
// S's distribution -> master: "let me start" (w0 S).
inline constexpr SignalId kStartPermReq = 470;
// master -> S: w0 master, w1 current GCI, w2 last complete GCI; section = dead nodes
// as (u16 node, u32 GCI it died in) entries, S itself excluded.
inline constexpr SignalId kStartPermConf = 471;
// master -> S: w0 ErrorCode (kTemporary: try again later), section = message.
inline constexpr SignalId kStartPermRef = 472;
// master -> every live distribution, then distribution -> its coordinator, dictionary
// and every local_query instance: w0 S. S is no longer dead: it is a replica that
// takes every write of its fragments (last in the chain) but no reads, is never
// primary and coordinates nothing, until NODE_STARTEDREP.
inline constexpr SignalId kNodeStartingRep = 473;
inline constexpr SignalId kNodeStartingConf = 474;  // back to whoever sent the REP: w0 S
// master -> the distribution of every live node of S's node group, then -> every
// local_query instance there: w0 S. Copy every fragment held here whose live chain
// (with S starting) starts at this node and includes S, row by row under a shared
// row lock, to S's instance of the same log part.
inline constexpr SignalId kCopyNodeReq = 475;
// back: w0 S, w1 fragments copied, w2/w3 rows copied (low/high 32 bits).
inline constexpr SignalId kCopyNodeConf = 476;
// back: w0 S, w1 ErrorCode; section = message.
inline constexpr SignalId kCopyNodeRef = 477;
// master -> every live distribution (S's too), then -> the local blocks: w0 S, w1 the
// GCI in which S's coordinator starts. S is an ordinary live replica from here on.
inline constexpr SignalId kNodeStartedRep = 478;
inline constexpr SignalId kNodeStartedConf = 479;  // back to whoever sent the REP: w0 S

// Node restart, membership (480..489): the starting node joins the heartbeat ring.
// M's distribution -> its membership block (the president): w0 S.
inline constexpr SignalId kIncludeNodeReq = 480;
inline constexpr SignalId kIncludeNodeConf = 481;  // -> requester: w0 S
inline constexpr SignalId kIncludeNodeRef = 482;   // -> requester: w0 S, w1 reason
// president -> members and S; member -> president (layouts: membership_messages.h).
inline constexpr SignalId kIncludeOrd = 483;
inline constexpr SignalId kIncludeConf = 484;
// S's distribution -> its membership: this node joins a running cluster; stay passive
// (no heartbeats, no suspicions) until INCLUDE_ORD names the live set.
inline constexpr SignalId kMembershipJoining = 485;
// Node restart, local_query (490..499).
// S's distribution -> each of its local_query instances: forget the old life (tables,
// checkpoint, redo); fragments created from now on are copying. CONF w0 = instance.
inline constexpr SignalId kNodeRestartInitReq = 490;
inline constexpr SignalId kNodeRestartInitConf = 491;
// Source local_query -> S's local_query of the same log part (layouts in
// docs/formats/kernel-protocol.md "Node restart").
inline constexpr SignalId kCopyRowsReq = 492;
inline constexpr SignalId kCopyRowsConf = 493;
inline constexpr SignalId kCopyRowsRef = 494;
// S's local_query -> its distribution: copy progress of the part (w0 instance, w1
// fragments held, w2 fragments whose copy ended, w3/w4 whole rows written, w5/w6 keys
// of unchanged rows; low/high 32 bits), for the start phase's progress report.
inline constexpr SignalId kCopyProgressRep = 495;

// Node restart field values (docs/formats/kernel-protocol.md "Node restart").
// NODE_RESTART_INITREQ w0: keep the rows restored from this node's own disk (tables
// stay; only the old checkpoint and redo files go). CONF section then: (u32 table id,
// u32 version) per table whose rows were restored.
inline constexpr uint32_t kNodeRestartKeepRestored = 1;
// LQH_RESTOREREQ w1: a node restart's restore: no checkpoint after it (the files are
// discarded next), unique indexes stay unenforced (copying follows).
inline constexpr uint32_t kRestoreForNodeRestart = 1;
// COPY_ROWSREQ w5 flags.
inline constexpr uint32_t kCopyRowsWithGci = 1u << 0;      // section: u32 n, n x u32 GCI, RowBatch
inline constexpr uint32_t kCopyRowsFragmentEnd = 1u << 1;  // the fragment's last (empty) batch
// Section: a RowBatch of keys the source deleted since w6 (the starting node deletes
// those rows it holds with a GCI at most w6).
inline constexpr uint32_t kCopyRowsDeletedKeys = 1u << 2;
// With kCopyRowsFragmentEnd: the deleted keys were sent, unchanged rows were not (no
// sweep of rows not seen).
inline constexpr uint32_t kCopyRowsDeletesSent = 1u << 3;
// Node restart, dictionary (500..509).
// M's distribution -> its dictionary: no schema transaction may start (the running one
// ends first; CONF then); new requests are refused with kTemporary (NDB 711).
inline constexpr SignalId kDictLockReq = 500;
inline constexpr SignalId kDictLockConf = 501;
inline constexpr SignalId kDictUnlockReq = 502;  // no answer
// S's distribution -> its dictionary: w0 = M; copy the schema from M's dictionary,
// install it, answer CONF (w0 tables) or REF (w0 ErrorCode, section message).
inline constexpr SignalId kDictCopyReq = 503;
inline constexpr SignalId kDictCopyConf = 504;
inline constexpr SignalId kDictCopyRef = 505;
// 506..509: between S's dictionary and M's (dictionary_block.h).
inline constexpr SignalId kDictSchemaReq = 506;
inline constexpr SignalId kDictSchemaData = 507;

// Node restart, distribution (510..519).
// S's distribution -> master: S's local_query instances are wiped and its schema copied
// (w0 S): the master may route writes to it.
inline constexpr SignalId kNodeRestartReadyRep = 510;
// S's distribution -> master: S's first local checkpoint after its restart is done
// (w0 S): from the next complete GCI on S can recover by itself.
inline constexpr SignalId kNodeRecoverableRep = 511;
// distribution to itself: repeat START_PERMREQ (S), or retry the include (master).
inline constexpr SignalId kNodeRestartTimer = 512;

// ndbinfo (520..529): an API node -> a local_query instance: w0 request id, w1 table
// (kDbinfoOperations). CONF: w0 request id, w1 rows, w2 1 when rows were left out (the
// section holds at most kDbinfoRowsMax), section = the rows (messages.h DbinfoOperation).
inline constexpr SignalId kDbinfoScanReq = 520;
inline constexpr SignalId kDbinfoScanConf = 521;
inline constexpr uint32_t kDbinfoOperations = 1;

// Dictionary master takeover (530..539): the new master -> every live dictionary when
// the master died: w0 the dead master. CONF: w0 dead master, w1 the last schema
// transaction this node committed from it (0: none), w2 the one it holds prepared from
// it (0: none), w3 1 when that one's commit already arrived here (it is committing),
// w4 the dead master's ALTER whose index build failed here and was not undone (0: none),
// w5 that ALTER's table id.
inline constexpr SignalId kDictTakeoverReq = 530;
inline constexpr SignalId kDictTakeoverConf = 531;

// API node failure hold-back (540..549; NDB's API_FAILREQ / API_FAILCONF). The runtime
// host (duo_datad when an API node's link closes; a simulator harness) -> its own
// membership block: w0 the API node. The membership block holds the API node back
// (SignalGate) and sends API_FAILREQ{w0 API node} to its coordinator and dictionary;
// each answers API_FAILCONF{w0 API node} to it once nothing of that node's old
// connection is left there (transactions ended, scans closed, schema requests done).
inline constexpr SignalId kApiFailReq = 540;
inline constexpr SignalId kApiFailConf = 541;

// Disk-data objects (550..569; docs/formats/kernel-protocol.md "Disk-data objects").
// Client -> master dictionary: w0 request id, w1 FilegroupOp; section FilegroupChange
// (protocol/filegroup.h). CONF (DictMsg): a = filegroup id, b = its version. REF
// (DictMsg): a = ErrorCode, b = NDB error code (kNdb*), text = message.
inline constexpr SignalId kFilegroupReq = 550;
inline constexpr SignalId kFilegroupConf = 551;
inline constexpr SignalId kFilegroupRef = 552;
// Client -> any dictionary: w0 request id. CONF: w0 request id; section = every
// filegroup with its files (encode_filegroup_list).
inline constexpr SignalId kListFilegroupsReq = 553;
inline constexpr SignalId kListFilegroupsConf = 554;
// Master -> every dictionary: w0 schema transaction, w1 op; section FilegroupChange with
// ids assigned. Each checks it and creates the new file (FS_ALLOCREQ); CONF / REF
// (DictMsg: request_id = schema transaction, a = ErrorCode, b = NDB code, text).
inline constexpr SignalId kFilegroupPrepareReq = 555;
inline constexpr SignalId kFilegroupPrepareConf = 556;
inline constexpr SignalId kFilegroupPrepareRef = 557;
// Master -> every dictionary: w0 schema transaction, w1 0 commit / 1 abort (an abort
// removes a file the prepare created). CONF: w0 schema transaction, once the schema file
// holds the change (and a dropped file is removed).
inline constexpr SignalId kFilegroupCommitReq = 558;
inline constexpr SignalId kFilegroupCommitConf = 559;

// Registers the names above for logs (idempotent).
void register_protocol_signal_names();

}  // namespace duo::protocol
