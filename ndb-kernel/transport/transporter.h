// Transporter: the TCP links of one node to its peers, and the kernel's RemoteSender.
//
// One Transporter per node process. It listens on one port, dials the peers it is meant
// to dial, runs the hello (handshake.h) on every new connection, and then moves signals
// both ways as frames (frame.h). Received signals go to a ReceiveCallback (normally the
// ThreadRuntime, see deliver_to_runtime); link state changes go to a LinkEventCallback
// (later the membership block). Wire format and rules: docs/formats/transport.md.
//
// Connection rule: between nodes A < B, B dials A and A accepts; so each pair has exactly
// one TCP connection and no tie-break for simultaneous connects is ever needed. Low ids
// are mgmd and data nodes, high ids API nodes, so as in NDB the API nodes dial the data
// nodes. A hello from a node that should have been dialled by us, or from a node that is
// not a configured peer, is refused. A new valid connection from a peer that already has
// a link replaces the old one (the peer restarted before we noticed the old one die).
//
// Why epoll and not Boost.Asio: the transporter is one thread, one epoll set, a few
// dozen sockets and explicit byte buffers whose bounds we must control exactly. Raw
// epoll keeps every allocation and every buffer limit visible in this file, adds no
// dependency to the kernel library, and maps one to one onto the simulator's network
// model (per-link FIFO byte streams); Asio's handlers and its own buffering would hide
// exactly the things we need to bound.
//
// Limits and overload answers (DESIGN.md §3 "bounded everything"):
//   - per link, at most send_buffer_bytes_max queued by senders plus one batch being
//     written by the I/O thread (so 2x in the worst case); a full buffer answers
//     send_remote() with kTemporary;
//   - a signal to a configured peer without a ready link: kTemporary ("not connected");
//   - a connection is refused while pending_connections_max handshakes are in flight,
//     and a handshake that does not finish within handshake_timeout_ms is closed;
//   - incoming bytes are decoded straight from a 64 KiB read buffer; at most one
//     incomplete frame per connection is kept (kFrameBytesMax); when the receiver answers
//     kTemporary (its queue is full) the link stops reading until the receiver drains
//     — TCP flow control then pushes back on the sender — so nothing is dropped.
// The transporter does not judge senders' cluster state: a data node declared dead may
// connect again (its restarted process must); the ThreadRuntime's RemoteSignalFilter
// (the membership block's SignalGate) drops what it may not say.
//
// Any protocol violation (garbage, bad hello, bad frame, a frame whose sender is not the
// link's peer or whose receiver is not this node) closes that one connection with a log
// line naming the peer address and the reason; every other link keeps running.
//
// TLS (TransporterOptions::use_tls, config.ini RequireTls): every connection runs a
// TLS 1.3 handshake with mutual certificate authentication (tls_context.h) right after
// TCP connect/accept, and the hello and all frames then travel inside TLS. The hello's
// node id must be the one the peer's certificate names, so node ids are authenticated.
// The TLS handshake is non-blocking and driven by the epoll loop like everything else;
// handshake_timeout_ms covers TLS handshake and hello together. A TLS failure (wrong
// CA, a certificate naming another node, a plaintext peer) closes that connection with a
// log line naming the peer and OpenSSL's reason; limits and kTemporary answers are the
// same with and without TLS. A transporter is all-TLS or all-plaintext.
//
// Who runs the I/O loop (TransporterOptions::io_thread): by default the transporter's
// own I/O thread. Without it, the owner drives the loop with poll(), one turn per call,
// on whatever thread holds its poll right: a data node's receive thread, which then
// receives, coordinates and executes a request without a thread hand-off, or the
// client library's poll owner, a user thread that receives its own answer (NDB's
// TransporterFacade poll right). wake_poller() makes a poll() waiting in epoll return.
//
// Lifecycle: create() (binds and listens, so listen_port() is known) → start() →
// stop() (or destruction). With a ThreadRuntime: create the runtime, create the
// transporter with deliver_to_runtime(runtime), runtime.set_remote_sender(transporter),
// start both; with the transporter's own I/O thread stop it first (no more
// deliveries), then the runtime; when a runtime thread polls it, stop the runtime first
// (nobody polls any more), then the transporter. Add every block before the transporter
// starts: a signal may arrive before the runtime's own start(), and then waits in the
// receiving thread's queue.
//
// Thread-safety: send_remote(), set_peer_address(), disconnect(), is_connected(), stats(),
// wake_poller() and listen_port() are safe from any thread. create/start/stop are for one
// controlling thread; poll() for one thread at a time (checked: two at once abort), and
// never concurrently with stop(). Callbacks run on the thread running the I/O loop (the
// I/O thread, or the caller of poll() or stop()), without any transporter lock held;
// they must not call stop() or poll(), and what they touch must outlive the transporter
// (a stopping transporter still reports its links going down).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/runtime/signal.h"
#include "ndb-kernel/runtime/thread_runtime.h"
#include "ndb-kernel/transport/tls_context.h"

namespace duo::transport {

enum class LinkState : uint8_t { kConnected, kDisconnected };
const char* link_state_name(LinkState state);

struct LinkEvent {
  uint16_t node_id = 0;
  LinkState state = LinkState::kDisconnected;
  std::string peer_address;  // "127.0.0.1:40123"
  std::string reason;        // why a link went down; empty for kConnected
};

// LinkEvent::reason of a link closed by Transporter::disconnect().
inline constexpr char kDisconnectedByThisNode[] = "disconnected by this node";

struct PeerConfig {
  uint16_t node_id = 0;
  // Where to dial the peer; only used when this node is the dialling side (higher id).
  // Port 0 means "not known yet": the peer is not dialled until set_peer_address().
  std::string host = "127.0.0.1";
  uint16_t port = 0;
};

struct TransporterOptions {
  uint16_t node_id = 0;
  // Address to listen on; port 0 lets the OS pick a free port (see listen_port()).
  std::string listen_host = "127.0.0.1";
  uint16_t listen_port = 0;
  // Compared for equality in the hello; at most kClusterSecretBytesMax bytes.
  std::string cluster_secret;
  std::vector<PeerConfig> peers;
  // Bytes of encoded frames queued per link before send_remote answers kTemporary. At
  // least kFrameBytesMax, so that any single signal fits an empty buffer.
  size_t send_buffer_bytes_max = 4 * 1024 * 1024;
  // A sender whose link has nothing queued writes its frame to the socket itself
  // (plain TCP only) instead of waking the I/O thread. Data nodes set it: their block
  // threads send in batches, and sysbench/duo_bench measured less CPU per operation.
  // Clients leave it off: a session thread that sends and then sleeps on its answer
  // measured ~15% more CPU per point select than one that hands the frame over.
  bool send_from_caller = false;
  // start() runs the I/O loop on the transporter's own thread. False: the owner calls
  // poll() instead (see the file comment).
  bool io_thread = true;
  // Reconnect backoff of the dialling side: the delay doubles per failed attempt from
  // min to max, and resets to min once a link is up.
  uint64_t reconnect_delay_min_ms = 50;
  uint64_t reconnect_delay_max_ms = 5000;
  uint64_t handshake_timeout_ms = 5000;
  size_t pending_connections_max = 64;
  // How soon a delivery the receiver refused with kTemporary is retried.
  uint64_t delivery_retry_delay_ms = 1;
  // TLS on every link (config.ini RequireTls), with `tls` as this node's key material
  // (tls_files.h loads it from a search path). Ignored when use_tls is false.
  bool use_tls = false;
  TlsMaterial tls;
};

// Hands one received signal to the kernel. OK means the signal was taken. kTemporary
// means "full, try later": the callback must then leave `signal` unchanged, and the
// transporter retries it (and stops reading that link) until it is taken. Any other
// error drops the signal with a log line (e.g. a receiver block that does not exist).
using ReceiveCallback = std::function<Status(kernel::Signal& signal)>;
using LinkEventCallback = std::function<void(const LinkEvent& event)>;

// A ReceiveCallback that delivers into `runtime` with send_from_outside(). The runtime
// must outlive the transporter's running time.
ReceiveCallback deliver_to_runtime(kernel::ThreadRuntime& runtime);

struct TransporterStats {
  uint64_t frames_queued = 0;     // accepted by send_remote
  uint64_t frames_delivered = 0;  // taken by the ReceiveCallback
  uint64_t bytes_written = 0;
  uint64_t bytes_read = 0;
  uint64_t refused_not_connected = 0;  // send_remote: kTemporary, no ready link
  uint64_t refused_buffer_full = 0;    // send_remote: kTemporary, link buffer full
  uint64_t connections_accepted = 0;
  uint64_t connections_closed_for_errors = 0;  // protocol, handshake or socket errors
  uint64_t connect_attempts = 0;
  uint64_t links_established = 0;
  uint64_t delivery_retries = 0;       // receiver answered kTemporary
  uint64_t dropped_undeliverable = 0;  // receiver answered another error
};

class Transporter final : public kernel::RemoteSender {
 public:
  // True if `own_node_id` dials `peer_node_id` (the connection rule above).
  static bool dials(uint16_t own_node_id, uint16_t peer_node_id) {
    return own_node_id > peer_node_id;
  }

  // Validates `options` (and with use_tls the key material), binds and listens.
  // kConfigError for bad options or unusable TLS material, kIoError when the address
  // cannot be bound.
  static Result<std::unique_ptr<Transporter>> create(TransporterOptions options,
                                                     ReceiveCallback on_receive,
                                                     LinkEventCallback on_link_event);
  // Stops (if running) and closes every socket.
  ~Transporter() override;
  Transporter(const Transporter&) = delete;
  Transporter& operator=(const Transporter&) = delete;

  // Starts the I/O thread (with options.io_thread): accepting, dialling, handshakes,
  // traffic. Without it, only marks the transporter running for poll().
  Status start();
  // Closes every link (reporting kDisconnected for links that were up) and joins the
  // I/O thread. Idempotent. Signals still queued are dropped.
  void stop();

  // Without options.io_thread: one turn of the I/O loop on the calling thread — waits
  // up to `max_wait_ms` (0: not at all) for something to happen, then accepts, reads and
  // delivers, writes, dials and expires handshakes as due. kInvalidArgument when not
  // running.
  Status poll(uint64_t max_wait_ms);
  // Makes a poll() that waits in epoll (or the I/O thread) return at once.
  void wake_poller();

  // The port actually listened on (the OS's pick when options.listen_port was 0).
  uint16_t listen_port() const { return listen_port_; }
  uint16_t node_id() const { return options_.node_id; }

  // Changes where peer `node_id` is dialled (e.g. it restarted on another port). Takes
  // effect at the next connection attempt, which is made at once if the link is down.
  // kInvalidArgument for a node that is not a configured peer.
  Status set_peer_address(uint16_t node_id, std::string host, uint16_t port);

  // Closes the link to peer `node_id` (reporting kDisconnected if it was up) and drops
  // what is queued for it; a dialling side dials again after its backoff. For a peer
  // declared dead: the connection of its old process is never read again, so bytes
  // that process still had in flight (a healed network delivers them seconds later)
  // are not even decoded. What that process sends on a new link (it dials again) is
  // accepted here and dropped by the node's signal gate (membership/signal_gate.h, a
  // RemoteSignalFilter the runtime applies) until the node is admitted again.
  // kInvalidArgument for a node that is not a configured peer.
  Status disconnect(uint16_t node_id);

  // RemoteSender: queues `signal` on the link to its receiver's node. Errors:
  // kInvalidArgument (not sendable, own node, not a configured peer), kTemporary (no
  // ready link, or the link's send buffer is full).
  Status send_remote(kernel::Signal signal) override;

  bool is_connected(uint16_t node_id) const;
  TransporterStats stats() const;

 private:
  struct PeerLink;
  struct Connection;
  class IoLoop;

  Transporter(TransporterOptions options, ReceiveCallback on_receive,
              LinkEventCallback on_link_event);
  void wake_io_thread();

  // Constant after create().
  const TransporterOptions options_;
  const ReceiveCallback on_receive_;
  const LinkEventCallback on_link_event_;
  std::unique_ptr<TlsContext> tls_;  // null without use_tls
  uint16_t listen_port_ = 0;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: senders and stop() wake the I/O thread through it
  std::unordered_map<uint16_t, std::unique_ptr<PeerLink>> links_;  // key: peer node id

  std::unique_ptr<IoLoop> io_loop_;  // state owned by the I/O thread
  std::thread io_thread_;
  bool started_ = false;  // controlling thread only
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> polling_{false};  // a thread is inside poll()

  struct Counters;
  std::unique_ptr<Counters> counters_;
};

}  // namespace duo::transport
