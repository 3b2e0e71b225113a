// Transporter over real loopback sockets, in one process: nodes with ThreadRuntimes
// exchanging signal streams and ring tokens, link loss and reconnect from both sides,
// raw sockets sending garbage / bad hellos / bad frames, silent connections, overload
// answers (not connected, full send buffer, receiver backpressure). Every port is the
// OS's pick (port 0) and every wait is bounded (kWaitLimit).
#include "ndb-kernel/transport/transporter.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/runtime/testing/test_blocks.h"
#include "ndb-kernel/runtime/thread_runtime.h"
#include "ndb-kernel/transport/frame.h"
#include "ndb-kernel/transport/handshake.h"
#include "ndb-kernel/transport/wire_bytes.h"

namespace duo::transport {
namespace {

using kernel::BlockAddress;
using kernel::Signal;
using std::chrono::milliseconds;

constexpr milliseconds kWaitLimit{20'000};
constexpr const char* kSecret = "test-cluster";
constexpr kernel::SignalId kStream = 120;
constexpr kernel::SignalId kStreamTick = 121;
constexpr kernel::SignalId kProbe = 122;

bool wait_for(const std::function<bool()>& done, milliseconds limit = kWaitLimit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

// --- link events and received signals, recorded for the test thread ---------------

class Recorder {
 public:
  LinkEventCallback link_callback() {
    return [this](const LinkEvent& event) {
      std::lock_guard<std::mutex> lock(mutex_);
      events_.push_back(event);
    };
  }
  ReceiveCallback receive_callback() {
    return [this](Signal& signal) -> Status {
      if (refuse_.load(std::memory_order_acquire)) {
        return Status(ErrorCode::kTemporary, "test receiver is full");
      }
      std::lock_guard<std::mutex> lock(mutex_);
      received_.push_back(std::move(signal));
      return Status::OK();
    };
  }
  size_t events(uint16_t node_id, LinkState state) const {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t count = 0;
    for (const LinkEvent& e : events_) count += (e.node_id == node_id && e.state == state);
    return count;
  }
  size_t received() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return received_.size();
  }
  std::vector<uint32_t> received_words0() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<uint32_t> words;
    for (const Signal& s : received_) words.push_back(s.word(0));
    return words;
  }
  void set_refuse(bool refuse) { refuse_.store(refuse, std::memory_order_release); }

 private:
  mutable std::mutex mutex_;
  std::vector<LinkEvent> events_;
  std::vector<Signal> received_;
  std::atomic<bool> refuse_{false};
};

TransporterOptions options_for(uint16_t node_id, const std::vector<PeerConfig>& peers) {
  TransporterOptions options;
  options.node_id = node_id;
  options.cluster_secret = kSecret;
  options.peers = peers;
  options.reconnect_delay_min_ms = 10;
  options.reconnect_delay_max_ms = 200;
  options.handshake_timeout_ms = 3000;
  return options;
}

std::unique_ptr<Transporter> make_transporter(TransporterOptions options, Recorder& recorder,
                                              ReceiveCallback receive = nullptr) {
  auto t = Transporter::create(std::move(options),
                               receive ? std::move(receive) : recorder.receive_callback(),
                               recorder.link_callback());
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  if (!t.ok()) return nullptr;
  EXPECT_NE(t.value()->listen_port(), 0);
  EXPECT_TRUE(t.value()->start().ok());
  return std::move(t).value();
}

Signal probe(uint16_t from, uint16_t to, uint32_t value, size_t section_bytes = 0) {
  Signal signal(kProbe, {value});
  signal.set_sender(BlockAddress{from, 9, 0});
  signal.set_receiver(BlockAddress{to, 9, 0});
  signal.set_section(std::vector<uint8_t>(section_bytes, static_cast<uint8_t>(value)));
  return signal;
}

// Sends one probe from `a` (node a_id) to `b` and waits until `b_recorder` has it.
bool exchange_works(Transporter& a, Transporter& b, Recorder& b_recorder, uint32_t value) {
  const size_t before = b_recorder.received();
  Status status = a.send_remote(probe(a.node_id(), b.node_id(), value));
  if (!status.ok()) {
    ADD_FAILURE() << status.to_string();
    return false;
  }
  return wait_for([&] { return b_recorder.received() > before; });
}

// --- raw client sockets for the misbehaving-peer tests -------------------------------

class RawClient {
 public:
  explicit RawClient(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    timeval timeout{.tv_sec = 0, .tv_usec = 100 * 1000};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  }
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool connected() const { return connected_; }
  // "127.0.0.1:<port>": how the transporter names this client in its log.
  std::string local_address() const {
    sockaddr_in address{};
    socklen_t length = sizeof(address);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    return "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  }
  void send_bytes(std::span<const uint8_t> bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;  // the server may already have closed: that is what we test
      sent += static_cast<size_t>(n);
    }
  }
  void send_text(std::string_view text) {
    send_bytes({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  }
  void send_hello(uint16_t node_id, uint16_t peer_node_id, std::string secret = kSecret,
                  uint16_t version = kTransportProtocolVersion) {
    Hello hello;
    hello.node_id = node_id;
    hello.peer_node_id = peer_node_id;
    hello.cluster_secret = std::move(secret);
    std::vector<uint8_t> bytes = encode_hello(hello).value();
    wire::store_u16(bytes.data() + 4, version);
    send_bytes(bytes);
  }
  void shutdown_write() { ::shutdown(fd_, SHUT_WR); }
  // True once the server closed the connection (EOF or reset), reading whatever it sent.
  bool wait_closed_by_server(milliseconds limit = kWaitLimit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    uint8_t buffer[4096];
    while (std::chrono::steady_clock::now() < deadline) {
      const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n == 0) return true;
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return true;
    }
    return false;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

// --- blocks for the runtime test --------------------------------------------------

enum : uint16_t { kStreamSenderBlock = 20, kStreamReceiverBlock = 21 };

// The section of stream signal `sequence`: sizes sweep the codec's boundaries, bytes
// depend on the sequence, so a reordered, torn or misdelivered section is noticed.
std::vector<uint8_t> stream_section(uint32_t sequence) {
  size_t size = sequence % 300;
  if (sequence % 7 == 6) size = 4000;
  if (sequence % 501 == 500) size = kernel::kSectionBytesMax;
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(sequence * 131 + i);
  return bytes;
}

Signal stream_signal(uint32_t sequence) {
  Signal signal(kStream);
  const size_t words = 1 + sequence % kernel::kSignalWordsMax;
  signal.set_word(0, sequence);
  for (size_t i = 1; i < words; ++i) signal.set_word(i, sequence ^ static_cast<uint32_t>(i));
  signal.set_section(stream_section(sequence));
  return signal;
}

// Sends `total` stream signals to `target` in bursts; a kTemporary answer (send buffer
// full) is retried on the next tick with the same sequence, so the stream has no gaps.
class StreamSender final : public kernel::Block {
 public:
  StreamSender(BlockAddress target, uint32_t total)
      : Block("stream_sender", kStreamSenderBlock, target.node_id), target_(target), total_(total) {
    on(kStreamTick, &StreamSender::on_tick);
  }
  void on_start() override {
    Signal tick(kStreamTick);
    on_tick(tick);
  }
  uint32_t sent() const { return next_.load(std::memory_order_acquire); }
  uint32_t errors() const { return errors_.load(std::memory_order_acquire); }

 private:
  void on_tick(Signal&) {
    for (int i = 0; i < 200 && next_.load() < total_; ++i) {
      const uint32_t sequence = next_.load();
      Status status = send(target_, stream_signal(sequence));
      if (status.is(ErrorCode::kTemporary)) break;
      if (!status.ok()) {
        errors_.fetch_add(1);
        break;
      }
      next_.store(sequence + 1, std::memory_order_release);
    }
    if (next_.load() < total_) {
      if (!send_delayed(address(), Signal(kStreamTick), 1).ok()) errors_.fetch_add(1);
    }
  }

  const BlockAddress target_;
  const uint32_t total_;
  std::atomic<uint32_t> next_{0};
  std::atomic<uint32_t> errors_{0};
};

// Checks each sender's stream arrives complete, in order and intact.
class StreamReceiver final : public kernel::Block {
 public:
  StreamReceiver() : Block("stream_receiver", kStreamReceiverBlock) {
    on(kStream, &StreamReceiver::on_stream);
  }
  uint32_t received_from(uint16_t node_id) const { return received_[node_id].load(); }
  uint32_t violations() const { return violations_.load(); }

 private:
  void on_stream(Signal& signal) {
    const uint16_t from = signal.sender().node_id;
    if (from >= received_.size()) {
      violations_.fetch_add(1);
      return;
    }
    const uint32_t sequence = signal.word(0);
    const Signal expected = stream_signal(sequence);
    bool ok = sequence == received_[from].load() &&
              signal.length_words() == expected.length_words() &&
              signal.section() == expected.section();
    for (size_t i = 0; ok && i < expected.length_words(); ++i)
      ok = signal.word(i) == expected.word(i);
    if (!ok) violations_.fetch_add(1);
    received_[from].fetch_add(1, std::memory_order_acq_rel);
  }

  std::array<std::atomic<uint32_t>, 8> received_{};
  std::atomic<uint32_t> violations_{0};
};

// --- tests --------------------------------------------------------------------------

TEST(TransporterTest, ConnectionRuleHigherIdDials) {
  EXPECT_TRUE(Transporter::dials(2, 1));
  EXPECT_FALSE(Transporter::dials(1, 2));
}

TEST(TransporterTest, BadOptionsAreRefused) {
  Recorder recorder;
  TransporterOptions options = options_for(1, {});
  options.use_tls = true;  // without key material (tls_transporter_test.cc has the rest)
  EXPECT_TRUE(Transporter::create(options, recorder.receive_callback(), nullptr)
                  .status()
                  .is(ErrorCode::kConfigError));
  options = options_for(1, {{.node_id = 1}});
  EXPECT_TRUE(Transporter::create(options, recorder.receive_callback(), nullptr)
                  .status()
                  .is(ErrorCode::kConfigError));
  options = options_for(1, {});
  options.send_buffer_bytes_max = 1000;
  EXPECT_TRUE(Transporter::create(options, recorder.receive_callback(), nullptr)
                  .status()
                  .is(ErrorCode::kConfigError));
  options = options_for(1, {});
  options.listen_host = "203.0.113.1";  // TEST-NET-3: not an address of this machine
  EXPECT_TRUE(Transporter::create(options, recorder.receive_callback(), nullptr)
                  .status()
                  .is(ErrorCode::kIoError));
}

TEST(TransporterTest, SendToUnconnectedNodeIsTemporary) {
  Recorder recorder;
  auto node1 = make_transporter(options_for(1, {{.node_id = 2}}), recorder);
  ASSERT_NE(node1, nullptr);
  Status status = node1->send_remote(probe(1, 2, 7));
  EXPECT_TRUE(status.is(ErrorCode::kTemporary)) << status.to_string();
  EXPECT_NE(status.message().find("not connected"), std::string::npos);
  EXPECT_TRUE(node1->send_remote(probe(1, 9, 7)).is(ErrorCode::kInvalidArgument));
  EXPECT_TRUE(node1->send_remote(probe(1, 1, 7)).is(ErrorCode::kInvalidArgument));
  EXPECT_EQ(node1->stats().refused_not_connected, 1u);
  EXPECT_FALSE(node1->is_connected(2));
}

// Three nodes, each with a ThreadRuntime: six streams (every node to every other node)
// with sections of boundary sizes, plus a token ring across the three nodes.
TEST(TransporterTest, ThreeNodesExchangeSignalsThroughRuntimes) {
  kernel::test_blocks::register_test_signal_names();
  constexpr uint32_t kSignalsPerStream = 3000;
  constexpr uint16_t kNodes = 3;
  const std::vector<BlockAddress> ring = {{1, kernel::test_blocks::kRingBlockNumber, 0},
                                          {2, kernel::test_blocks::kRingBlockNumber, 1},
                                          {3, kernel::test_blocks::kRingBlockNumber, 2}};
  std::vector<std::unique_ptr<kernel::ThreadRuntime>> runtimes;
  std::vector<std::unique_ptr<Transporter>> transporters;
  std::vector<std::unique_ptr<Recorder>> recorders;
  std::vector<StreamReceiver*> receivers;
  std::vector<StreamSender*> senders;
  std::vector<kernel::test_blocks::RingBlock*> ring_blocks;
  for (uint16_t node = 1; node <= kNodes; ++node) {
    kernel::ThreadRuntimeOptions runtime_options;
    runtime_options.node_id = node;
    runtime_options.layout = kernel::ThreadLayout{
        .ldm_threads = 1, .recv_threads = 1, .send_threads = 0, .main_runs_recv = true};
    runtime_options.seed = node;
    auto runtime = kernel::ThreadRuntime::create(runtime_options);
    ASSERT_TRUE(runtime.ok()) << runtime.status().to_string();
    runtimes.push_back(std::move(runtime).value());
    auto receiver = std::make_unique<StreamReceiver>();
    receivers.push_back(receiver.get());
    ASSERT_TRUE(runtimes.back()->add_block(std::move(receiver), 1).ok());
    for (uint16_t peer = 1; peer <= kNodes; ++peer) {
      if (peer == node) continue;
      auto sender = std::make_unique<StreamSender>(BlockAddress{peer, kStreamReceiverBlock, 0},
                                                   kSignalsPerStream);
      senders.push_back(sender.get());
      ASSERT_TRUE(runtimes.back()->add_block(std::move(sender), 0).ok());
    }
    auto ring_block = std::make_unique<kernel::test_blocks::RingBlock>(
        ring, static_cast<uint16_t>(node - 1), /*tokens=*/3, /*laps=*/40);
    ring_blocks.push_back(ring_block.get());
    ASSERT_TRUE(runtimes.back()->add_block(std::move(ring_block), 0).ok());
  }
  // Acceptors first so dialling nodes know their ports: node 1, then 2, then 3.
  for (uint16_t node = 1; node <= kNodes; ++node) {
    std::vector<PeerConfig> peers;
    for (uint16_t peer = 1; peer <= kNodes; ++peer) {
      if (peer == node) continue;
      PeerConfig config{.node_id = peer};
      if (Transporter::dials(node, peer)) config.port = transporters[peer - 1]->listen_port();
      peers.push_back(config);
    }
    recorders.push_back(std::make_unique<Recorder>());
    transporters.push_back(make_transporter(options_for(node, peers), *recorders.back(),
                                            deliver_to_runtime(*runtimes[node - 1])));
    ASSERT_NE(transporters.back(), nullptr);
    runtimes[node - 1]->set_remote_sender(transporters.back().get());
  }
  ASSERT_TRUE(wait_for([&] {
    for (uint16_t node = 1; node <= kNodes; ++node) {
      for (uint16_t peer = 1; peer <= kNodes; ++peer) {
        if (peer != node && !transporters[node - 1]->is_connected(peer)) return false;
      }
    }
    return true;
  }));
  for (auto& runtime : runtimes) ASSERT_TRUE(runtime->start().ok());

  const bool done = wait_for([&] {
    for (StreamReceiver* receiver : receivers) {
      for (uint16_t peer = 1; peer <= kNodes; ++peer) {
        if (receiver != receivers[peer - 1] && receiver->received_from(peer) < kSignalsPerStream) {
          return false;
        }
      }
    }
    uint32_t retired = 0;
    for (auto* block : ring_blocks) retired += block->tokens_retired();
    return retired == 3;
  });
  EXPECT_TRUE(done);
  for (uint16_t node = 1; node <= kNodes; ++node) {
    StreamReceiver* receiver = receivers[node - 1];
    EXPECT_EQ(receiver->violations(), 0u) << "node " << node;
    for (uint16_t peer = 1; peer <= kNodes; ++peer) {
      if (peer != node) {
        EXPECT_EQ(receiver->received_from(peer), kSignalsPerStream);
      }
    }
  }
  for (StreamSender* sender : senders) EXPECT_EQ(sender->errors(), 0u);
  for (auto* block : ring_blocks) {
    EXPECT_EQ(block->fifo_violations(), 0u);
    EXPECT_EQ(block->corrupt_sections(), 0u);
    EXPECT_EQ(block->send_errors(), 0u);
  }
  for (auto& t : transporters) {
    const TransporterStats stats = t->stats();
    EXPECT_EQ(stats.connections_closed_for_errors, 0u);
    EXPECT_EQ(stats.dropped_undeliverable, 0u);
  }
  // Shutdown order: transporters (no more deliveries), then runtimes.
  for (auto& t : transporters) t->stop();
  for (auto& runtime : runtimes) runtime->stop();
}

// The dialling side restarts, then the accepting side restarts on a new port: each time
// the survivor reports the link down, answers kTemporary, and the link comes back.
TEST(TransporterTest, LinkLossAndReconnectFromBothSides) {
  // Recorders first: callbacks run until a transporter is destroyed.
  Recorder r1;
  Recorder r2;
  Recorder r1b;
  Recorder r2b;
  auto node1 = make_transporter(options_for(1, {{.node_id = 2}}), r1);
  ASSERT_NE(node1, nullptr);
  auto node2 = make_transporter(options_for(2, {{.node_id = 1, .port = node1->listen_port()}}), r2);
  ASSERT_NE(node2, nullptr);
  ASSERT_TRUE(wait_for([&] { return node1->is_connected(2) && node2->is_connected(1); }));
  EXPECT_TRUE(exchange_works(*node1, *node2, r2, 1));
  EXPECT_TRUE(exchange_works(*node2, *node1, r1, 2));

  // The dialling node goes away and comes back.
  node2.reset();
  ASSERT_TRUE(wait_for([&] { return r1.events(2, LinkState::kDisconnected) == 1; }));
  EXPECT_FALSE(node1->is_connected(2));
  EXPECT_TRUE(node1->send_remote(probe(1, 2, 3)).is(ErrorCode::kTemporary));
  node2 = make_transporter(options_for(2, {{.node_id = 1, .port = node1->listen_port()}}), r2b);
  ASSERT_NE(node2, nullptr);
  ASSERT_TRUE(wait_for([&] { return r1.events(2, LinkState::kConnected) == 2; }));
  ASSERT_TRUE(wait_for([&] { return node2->is_connected(1); }));
  EXPECT_TRUE(exchange_works(*node1, *node2, r2b, 4));

  // The accepting node goes away: the dialler retries with backoff until it is back.
  node1.reset();
  ASSERT_TRUE(wait_for([&] { return r2b.events(1, LinkState::kDisconnected) == 1; }));
  EXPECT_TRUE(node2->send_remote(probe(2, 1, 5)).is(ErrorCode::kTemporary));
  const uint64_t attempts_before = node2->stats().connect_attempts;
  ASSERT_TRUE(wait_for([&] { return node2->stats().connect_attempts >= attempts_before + 3; }));
  node1 = make_transporter(options_for(1, {{.node_id = 2}}), r1b);
  ASSERT_NE(node1, nullptr);
  ASSERT_TRUE(node2->set_peer_address(1, "127.0.0.1", node1->listen_port()).ok());
  ASSERT_TRUE(wait_for([&] { return r2b.events(1, LinkState::kConnected) == 2; }));
  ASSERT_TRUE(wait_for([&] { return node1->is_connected(2); }));
  EXPECT_TRUE(exchange_works(*node2, *node1, r1b, 6));
  EXPECT_TRUE(exchange_works(*node1, *node2, r2b, 7));
  EXPECT_TRUE(node2->set_peer_address(9, "127.0.0.1", 1).is(ErrorCode::kInvalidArgument));
}

// disconnect() (a peer declared dead): the link goes down on both sides at once and the
// dialling side connects again after its backoff, whichever side asked.
TEST(TransporterTest, DisconnectClosesTheLinkAndTheDiallerReconnects) {
  Recorder r1;
  Recorder r2;
  auto node1 = make_transporter(options_for(1, {{.node_id = 2}}), r1);
  ASSERT_NE(node1, nullptr);
  auto node2 = make_transporter(options_for(2, {{.node_id = 1, .port = node1->listen_port()}}), r2);
  ASSERT_NE(node2, nullptr);
  ASSERT_TRUE(wait_for([&] { return node1->is_connected(2) && node2->is_connected(1); }));
  EXPECT_TRUE(exchange_works(*node1, *node2, r2, 1));

  // The accepting side disconnects.
  ASSERT_TRUE(node1->disconnect(2).ok());
  ASSERT_TRUE(wait_for([&] {
    return r1.events(2, LinkState::kDisconnected) == 1 &&
           r2.events(1, LinkState::kDisconnected) == 1;
  }));
  ASSERT_TRUE(wait_for([&] {
    return r1.events(2, LinkState::kConnected) == 2 && node1->is_connected(2) &&
           node2->is_connected(1);
  }));
  EXPECT_TRUE(exchange_works(*node2, *node1, r1, 2));

  // The dialling side disconnects.
  ASSERT_TRUE(node2->disconnect(1).ok());
  ASSERT_TRUE(wait_for([&] {
    return r1.events(2, LinkState::kDisconnected) == 2 &&
           r2.events(1, LinkState::kDisconnected) == 2;
  }));
  ASSERT_TRUE(wait_for([&] {
    return r2.events(1, LinkState::kConnected) == 3 && node1->is_connected(2) &&
           node2->is_connected(1);
  }));
  EXPECT_TRUE(exchange_works(*node1, *node2, r2, 3));
  EXPECT_TRUE(node1->disconnect(9).is(ErrorCode::kInvalidArgument));
}

// Misbehaving clients on node 1's port: each is cut off with a log line naming its
// address and the reason, while the real link 1<->2 keeps working.
TEST(TransporterTest, BadConnectionsAreClosedAndOtherLinksKeepWorking) {
  ScopedLogCapture capture(LogLevel::kInfo);
  Recorder r1;
  Recorder r2;
  TransporterOptions options1 = options_for(1, {{.node_id = 2}, {.node_id = 3}});
  options1.handshake_timeout_ms = 300;
  auto node1 = make_transporter(options1, r1);
  ASSERT_NE(node1, nullptr);
  auto node2 = make_transporter(options_for(2, {{.node_id = 1, .port = node1->listen_port()}}), r2);
  ASSERT_NE(node2, nullptr);
  ASSERT_TRUE(wait_for([&] { return node1->is_connected(2) && node2->is_connected(1); }));

  struct Case {
    const char* name;
    std::function<void(RawClient&)> misbehave;
    const char* reason;  // expected in the log line
  };
  const std::vector<Case> cases = {
      {"garbage", [](RawClient& c) { c.send_text("GET / HTTP/1.1\r\nHost: x\r\n\r\n"); },
       "bad magic"},
      {"wrong cluster", [](RawClient& c) { c.send_hello(3, 1, "another-cluster"); },
       "another cluster"},
      {"wrong version", [](RawClient& c) { c.send_hello(3, 1, kSecret, 7); }, "protocol version 7"},
      {"unexpected node id", [](RawClient& c) { c.send_hello(9, 1); }, "unexpected node id 9"},
      {"second hello instead of a frame",
       [](RawClient& c) {
         c.send_hello(3, 1);
         c.send_hello(3, 1);
       },
       "bad frame"},
      {"truncated frame",
       [](RawClient& c) {
         c.send_hello(3, 1);
         std::vector<uint8_t> frame;
         ASSERT_TRUE(encode_frame(probe(3, 1, 1, 100), &frame).ok());
         c.send_bytes(std::span(frame).first(frame.size() / 2));
         c.shutdown_write();
       },
       "truncated frame"},
      {"oversized section length",
       [](RawClient& c) {
         c.send_hello(3, 1);
         std::vector<uint8_t> frame;
         ASSERT_TRUE(encode_frame(probe(3, 1, 1, 10), &frame).ok());
         wire::store_u32(frame.data() + 28, 1u << 20);
         wire::store_u32(frame.data() + 8, 32 + 4 + (1u << 20) + 4);
         c.send_bytes(std::span(frame).first(kFrameHeaderBytes));
       },
       "over the limit"},
      {"oversized total length",
       [](RawClient& c) {
         c.send_hello(3, 1);
         std::vector<uint8_t> frame;
         ASSERT_TRUE(encode_frame(probe(3, 1, 1, 10), &frame).ok());
         wire::store_u32(frame.data() + 8, 0xFFFFFFF0u);
         c.send_bytes(std::span(frame).first(kFrameHeaderBytes));
       },
       "does not match"},
      {"spoofed sender",
       [](RawClient& c) {
         c.send_hello(3, 1);
         std::vector<uint8_t> frame;
         ASSERT_TRUE(encode_frame(probe(2, 1, 1), &frame).ok());
         c.send_bytes(frame);
       },
       "is not from node 3"},
      {"silent", [](RawClient&) {}, "handshake not completed within 300 ms"},
  };
  uint32_t value = 100;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    RawClient client(node1->listen_port());
    ASSERT_TRUE(client.connected());
    const std::string address = client.local_address();
    c.misbehave(client);
    EXPECT_TRUE(client.wait_closed_by_server());
    EXPECT_TRUE(wait_for([&] {
      for (const std::string& line : capture.sink().lines()) {
        if (line.find(address) != std::string::npos && line.find(c.reason) != std::string::npos) {
          return true;
        }
      }
      return false;
    })) << "no log line with "
        << address << " and '" << c.reason << "'";
    EXPECT_TRUE(node1->is_connected(2));
    EXPECT_TRUE(exchange_works(*node2, *node1, r1, value++));
    EXPECT_TRUE(exchange_works(*node1, *node2, r2, value++));
  }
  EXPECT_GE(node1->stats().connections_closed_for_errors, cases.size());
  if (HasFailure() || std::getenv("DUO_TRANSPORT_TEST_LOG") != nullptr) {
    for (const std::string& line : capture.sink().lines())
      std::fprintf(stderr, "%s\n", line.c_str());
  }
  EXPECT_EQ(r1.events(2, LinkState::kDisconnected), 0u);
}

// Node 1 does not list node 2: it refuses node 2's hello without answering, so node 2
// never reports the link up and keeps retrying with backoff.
TEST(TransporterTest, RefusedDiallerNeverReportsTheLinkUp) {
  ScopedLogCapture capture(LogLevel::kInfo);
  Recorder r1;
  Recorder r2;
  auto node1 = make_transporter(options_for(1, {{.node_id = 3}}), r1);
  ASSERT_NE(node1, nullptr);
  auto node2 = make_transporter(options_for(2, {{.node_id = 1, .port = node1->listen_port()}}), r2);
  ASSERT_NE(node2, nullptr);
  ASSERT_TRUE(wait_for([&] { return node2->stats().connect_attempts >= 3; }));
  EXPECT_EQ(r2.events(1, LinkState::kConnected), 0u);
  EXPECT_FALSE(node2->is_connected(1));
  EXPECT_GE(node1->stats().connections_closed_for_errors, 2u);
  EXPECT_TRUE(capture.sink().contains("unexpected node id 2"));
  EXPECT_TRUE(capture.sink().contains("peer refused our hello"));
}

// A second valid connection from the same node replaces the first (the peer restarted
// before the old socket was seen to die).
TEST(TransporterTest, NewConnectionFromSameNodeReplacesTheOld) {
  Recorder recorder;
  auto node1 = make_transporter(options_for(1, {{.node_id = 3}}), recorder);
  ASSERT_NE(node1, nullptr);
  RawClient first(node1->listen_port());
  first.send_hello(3, 1);
  ASSERT_TRUE(wait_for([&] { return recorder.events(3, LinkState::kConnected) == 1; }));
  RawClient second(node1->listen_port());
  second.send_hello(3, 1);
  ASSERT_TRUE(wait_for([&] { return recorder.events(3, LinkState::kConnected) == 2; }));
  EXPECT_EQ(recorder.events(3, LinkState::kDisconnected), 1u);
  EXPECT_TRUE(first.wait_closed_by_server());
  EXPECT_TRUE(node1->is_connected(3));
}

// A peer that completes the hello and then never reads: the per-link send buffer fills
// and send_remote answers kTemporary instead of growing without bound.
TEST(TransporterTest, FullSendBufferIsTemporary) {
  Recorder recorder;
  TransporterOptions options = options_for(1, {{.node_id = 3}});
  options.send_buffer_bytes_max = kFrameBytesMax;
  auto node1 = make_transporter(options, recorder);
  ASSERT_NE(node1, nullptr);
  RawClient client(node1->listen_port());
  client.send_hello(3, 1);
  ASSERT_TRUE(wait_for([&] { return node1->is_connected(3); }));
  Status status;
  const bool refused = wait_for([&] {
    status = node1->send_remote(probe(1, 3, 1, kernel::kSectionBytesMax));
    return status.is(ErrorCode::kTemporary);
  });
  EXPECT_TRUE(refused);
  EXPECT_NE(status.message().find("full"), std::string::npos);
  EXPECT_GE(node1->stats().refused_buffer_full, 1u);
}

// The receiver answers kTemporary for a while: the link stops reading, retries, and in
// the end every signal arrives once, in order.
TEST(TransporterTest, ReceiverBackpressureLosesNothing) {
  Recorder r1;
  Recorder r2;
  auto node1 = make_transporter(options_for(1, {{.node_id = 2}}), r1);
  ASSERT_NE(node1, nullptr);
  auto node2 = make_transporter(options_for(2, {{.node_id = 1, .port = node1->listen_port()}}), r2);
  ASSERT_NE(node2, nullptr);
  ASSERT_TRUE(wait_for([&] { return node1->is_connected(2); }));
  r1.set_refuse(true);
  constexpr uint32_t kCount = 2000;
  for (uint32_t i = 0; i < kCount; ++i) {
    Status status;
    ASSERT_TRUE(wait_for([&] {
      status = node2->send_remote(probe(2, 1, i, i % 200));
      return !status.is(ErrorCode::kTemporary);
    }));
    ASSERT_TRUE(status.ok()) << status.to_string();
  }
  ASSERT_TRUE(wait_for([&] { return node1->stats().delivery_retries > 10; }));
  EXPECT_EQ(r1.received(), 0u);
  r1.set_refuse(false);
  ASSERT_TRUE(wait_for([&] { return r1.received() == kCount; }));
  const std::vector<uint32_t> words = r1.received_words0();
  for (uint32_t i = 0; i < kCount; ++i) ASSERT_EQ(words[i], i);
}

// Without its own I/O thread the transporter does nothing until someone polls it: the
// owner's thread runs the loop (connecting, hello, traffic both ways), a send from
// another thread is written by that thread itself (send_from_caller) or waits for the
// next poll, wake_poller() ends a long wait at once, and stop() closes the links on the
// calling thread with their link-down events.
TEST(TransporterTest, PolledByItsOwnersThread) {
  Recorder rec1, rec2;
  auto t1 = make_transporter(options_for(1, {{2, "127.0.0.1", 0}}), rec1);
  TransporterOptions polled = options_for(2, {{1, "127.0.0.1", t1->listen_port()}});
  polled.io_thread = false;
  polled.send_from_caller = true;
  auto t2 = make_transporter(polled, rec2);
  ASSERT_NE(t1, nullptr);
  ASSERT_NE(t2, nullptr);
  EXPECT_DEATH(t1->poll(0).ignore_error(), "poll with its own I/O thread");
  // Nobody polls node 2 yet: it cannot even dial.
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_FALSE(t2->is_connected(1));

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> turns{0};
  std::thread owner([&] {
    while (!stop.load()) {
      ASSERT_TRUE(t2->poll(1000).ok());
      turns.fetch_add(1);
    }
  });
  ASSERT_TRUE(wait_for([&] { return t2->is_connected(1) && t1->is_connected(2); }));
  constexpr uint32_t kSignals = 2000;
  for (uint32_t i = 0; i < kSignals; ++i) {
    ASSERT_TRUE(t2->send_remote(probe(2, 1, i)).ok());
    ASSERT_TRUE(t1->send_remote(probe(1, 2, i)).ok());
  }
  ASSERT_TRUE(wait_for([&] { return rec1.received() == kSignals && rec2.received() == kSignals; }))
      << rec1.received() << " / " << rec2.received();
  std::vector<uint32_t> expected(kSignals);
  for (uint32_t i = 0; i < kSignals; ++i) expected[i] = i;
  EXPECT_EQ(rec1.received_words0(), expected);
  EXPECT_EQ(rec2.received_words0(), expected);

  // A poll waiting up to a second returns at once when woken.
  const uint64_t before = turns.load();
  const auto woken_at = std::chrono::steady_clock::now();
  t2->wake_poller();
  ASSERT_TRUE(wait_for([&] { return turns.load() > before; }));
  EXPECT_LT(std::chrono::steady_clock::now() - woken_at, milliseconds(900));

  stop.store(true);
  t2->wake_poller();
  owner.join();
  t2->stop();
  EXPECT_EQ(rec2.events(1, LinkState::kDisconnected), 1u);
  EXPECT_TRUE(t2->poll(0).is(ErrorCode::kInvalidArgument));
  ASSERT_TRUE(wait_for([&] { return rec1.events(2, LinkState::kDisconnected) == 1; }));
}

}  // namespace
}  // namespace duo::transport
