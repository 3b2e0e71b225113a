// Transporters with TLS over real loopback sockets, in one process: signals both ways
// (64 KiB sections too), reconnect, a certificate from another CA, a certificate that
// names another node than the hello claims, plaintext against TLS in both directions,
// garbage and silence on a TLS port, key material checks at create() and the key
// files' search path. Keys come from tls_authority.h (made once per process). Every
// port is the OS's pick and every wait is bounded (kWaitLimit).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "ndb-kernel/transport/handshake.h"
#include "ndb-kernel/transport/tls_authority.h"
#include "ndb-kernel/transport/tls_context.h"
#include "ndb-kernel/transport/tls_files.h"
#include "ndb-kernel/transport/transporter.h"

namespace duo::transport {
namespace {

using kernel::BlockAddress;
using kernel::Signal;
using std::chrono::milliseconds;

constexpr milliseconds kWaitLimit{20'000};
// How long a test watches for a link that must NOT come up: long enough for several
// dial attempts at the test's 10..200 ms backoff.
constexpr milliseconds kRefusalWatch{600};
constexpr const char* kSecret = "tls-test-cluster";
constexpr kernel::SignalId kProbe = 122;
constexpr uint32_t kValidDays = 30;

bool wait_for(const std::function<bool()>& done, milliseconds limit = kWaitLimit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

// --- keys ----------------------------------------------------------------------------

struct Keys {
  TlsKeyPair ca;
  TlsKeyPair other_ca;           // a second cluster's CA
  std::vector<TlsKeyPair> node;  // index = node id (0 unused), signed by `ca`
  TlsKeyPair node1_of_other_ca;
  TlsKeyPair node2_of_other_ca;
  TlsKeyPair node2_named_node3;  // signed by `ca`, but names node 3
};

const Keys& keys() {
  static const Keys* const made = [] {
    auto* k = new Keys;
    k->ca = create_cluster_ca("DuoDB test CA", kValidDays).value();
    k->other_ca = create_cluster_ca("DuoDB other CA", kValidDays).value();
    k->node.resize(4);
    for (uint16_t id = 1; id <= 3; ++id) k->node[id] = sign_node_key(k->ca, id, kValidDays).value();
    k->node1_of_other_ca = sign_node_key(k->other_ca, 1, kValidDays).value();
    k->node2_of_other_ca = sign_node_key(k->other_ca, 2, kValidDays).value();
    k->node2_named_node3 = sign_node_key(k->ca, 2, kValidDays, node_certificate_name(3)).value();
    return k;
  }();
  return *made;
}

TlsMaterial material(const TlsKeyPair& ca, const TlsKeyPair& node) {
  return TlsMaterial{ca.cert_pem, node.cert_pem, node.key_pem};
}

// --- recording callbacks ---------------------------------------------------------------

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
  std::vector<Signal> take_received() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(received_);
  }

 private:
  mutable std::mutex mutex_;
  std::vector<LinkEvent> events_;
  std::vector<Signal> received_;
};

TransporterOptions options_for(uint16_t node_id, const std::vector<PeerConfig>& peers,
                               const TlsMaterial* tls) {
  TransporterOptions options;
  options.node_id = node_id;
  options.cluster_secret = kSecret;
  options.peers = peers;
  options.reconnect_delay_min_ms = 10;
  options.reconnect_delay_max_ms = 200;
  options.handshake_timeout_ms = 3000;
  if (tls != nullptr) {
    options.use_tls = true;
    options.tls = *tls;
  }
  return options;
}

std::unique_ptr<Transporter> make_transporter(TransporterOptions options, Recorder& recorder) {
  auto t = Transporter::create(std::move(options), recorder.receive_callback(),
                               recorder.link_callback());
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  if (!t.ok()) return nullptr;
  EXPECT_TRUE(t.value()->start().ok());
  return std::move(t).value();
}

// The section of probe `sequence`: sizes sweep small, TLS-record-crossing (16 KiB) and
// the largest section; bytes depend on the sequence so torn data is noticed.
std::vector<uint8_t> probe_section(uint32_t sequence) {
  size_t size = (sequence * 997) % 20000;
  if (sequence % 10 == 9) size = kernel::kSectionBytesMax;
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(sequence * 31 + i * 7);
  return bytes;
}

Signal probe(uint16_t from, uint16_t to, uint32_t sequence) {
  Signal signal(kProbe, {sequence, static_cast<uint32_t>(from)});
  signal.set_sender(BlockAddress{from, 9, 0});
  signal.set_receiver(BlockAddress{to, 9, 0});
  signal.set_section(probe_section(sequence));
  return signal;
}

// Sends `count` probes from `from`, retrying kTemporary (send buffer full) until taken.
bool send_probes(Transporter& from, uint16_t to, uint32_t count) {
  for (uint32_t sequence = 0; sequence < count; ++sequence) {
    const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
    for (;;) {
      Status status = from.send_remote(probe(from.node_id(), to, sequence));
      if (status.ok()) break;
      if (!status.is(ErrorCode::kTemporary) || std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << status.to_string();
        return false;
      }
      std::this_thread::sleep_for(milliseconds(1));
    }
  }
  return true;
}

// Checks that `received` are probes 0..count-1 from `from`, in order and intact.
void expect_probes(const std::vector<Signal>& received, uint16_t from, uint32_t count) {
  ASSERT_EQ(received.size(), count);
  for (uint32_t sequence = 0; sequence < count; ++sequence) {
    const Signal& signal = received[sequence];
    ASSERT_EQ(signal.word(0), sequence);
    ASSERT_EQ(signal.sender().node_id, from);
    ASSERT_TRUE(signal.section() == probe_section(sequence)) << "probe " << sequence;
  }
}

bool exchange_works(Transporter& a, Transporter& b, Recorder& b_recorder) {
  const size_t before = b_recorder.received();
  Status status = a.send_remote(probe(a.node_id(), b.node_id(), 1));
  if (!status.ok()) {
    ADD_FAILURE() << status.to_string();
    return false;
  }
  return wait_for([&] { return b_recorder.received() > before; });
}

// A linked TLS pair: node 1 accepts, node 2 dials.
struct TlsPair {
  Recorder r1, r2;
  std::unique_ptr<Transporter> t1, t2;
  TlsPair() {
    const TlsMaterial m1 = material(keys().ca, keys().node[1]);
    const TlsMaterial m2 = material(keys().ca, keys().node[2]);
    t1 = make_transporter(options_for(1, {{.node_id = 2}}, &m1), r1);
    t2 = make_transporter(
        options_for(2, {{.node_id = 1, .host = "127.0.0.1", .port = t1->listen_port()}}, &m2), r2);
  }
  bool linked() {
    return wait_for([&] { return t1->is_connected(2) && t2->is_connected(1); });
  }
};

// --- raw clients ---------------------------------------------------------------------

int connect_to(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  timeval timeout{.tv_sec = 0, .tv_usec = 100 * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  return fd;
}

// True once the server closed `fd` (EOF or reset).
bool wait_closed_by_server(int fd) {
  const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
  uint8_t buffer[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n == 0) return true;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return true;
  }
  return false;
}

// --- tests -----------------------------------------------------------------------------

TEST(TlsTransporterTest, SignalsFlowBothWaysWithLargeSections) {
  TlsPair pair;
  ASSERT_TRUE(pair.linked());
  constexpr uint32_t kCount = 400;  // ~4 MB each way, 40 of them 64 KiB sections
  std::thread other([&] { EXPECT_TRUE(send_probes(*pair.t1, 2, kCount)); });
  EXPECT_TRUE(send_probes(*pair.t2, 1, kCount));
  other.join();
  ASSERT_TRUE(wait_for([&] {
    return pair.r1.received() == kCount && pair.r2.received() == kCount;
  })) << pair.r1.received()
      << " " << pair.r2.received();
  expect_probes(pair.r1.take_received(), 2, kCount);
  expect_probes(pair.r2.take_received(), 1, kCount);
  EXPECT_EQ(pair.t1->stats().connections_closed_for_errors, 0u);
  EXPECT_EQ(pair.t2->stats().connections_closed_for_errors, 0u);
}

TEST(TlsTransporterTest, ReconnectsAfterPeerRestart) {
  TlsPair pair;
  ASSERT_TRUE(pair.linked());
  ASSERT_TRUE(exchange_works(*pair.t2, *pair.t1, pair.r1));
  // The dialler restarts: a new transporter, a new TLS handshake.
  pair.t2.reset();
  ASSERT_TRUE(wait_for([&] { return !pair.t1->is_connected(2); }));
  const TlsMaterial m2 = material(keys().ca, keys().node[2]);
  Recorder r2;
  pair.t2 = make_transporter(
      options_for(2, {{.node_id = 1, .host = "127.0.0.1", .port = pair.t1->listen_port()}}, &m2),
      r2);
  ASSERT_TRUE(pair.linked());
  EXPECT_TRUE(exchange_works(*pair.t1, *pair.t2, r2));
  EXPECT_TRUE(exchange_works(*pair.t2, *pair.t1, pair.r1));
  EXPECT_EQ(pair.r1.events(2, LinkState::kConnected), 2u);
  pair.t2.reset();  // before r2, which its callbacks use
}

// Starts node 1 with `m1` and a dialling node 2 with `node2`; expects no link.
void expect_refused(const TlsMaterial& m1, const TlsMaterial& node2) {
  Recorder r1, r2;
  auto t1 = make_transporter(options_for(1, {{.node_id = 2}}, &m1), r1);
  auto t2 = make_transporter(
      options_for(2, {{.node_id = 1, .host = "127.0.0.1", .port = t1->listen_port()}}, &node2), r2);
  ASSERT_TRUE(wait_for([&] { return t1->stats().connections_closed_for_errors >= 2; }));
  std::this_thread::sleep_for(kRefusalWatch);
  EXPECT_FALSE(t1->is_connected(2));
  EXPECT_FALSE(t2->is_connected(1));
  EXPECT_EQ(r1.events(2, LinkState::kConnected), 0u);
  EXPECT_EQ(r2.events(1, LinkState::kConnected), 0u);
  EXPECT_GE(t2->stats().connect_attempts, 2u);
}

TEST(TlsTransporterTest, DiallerFromAnotherCaIsRefused) {
  // Node 2's key set is of another cluster CA: node 2 refuses node 1's certificate and
  // node 1 sees the alert ("unknown ca").
  expect_refused(material(keys().ca, keys().node[1]),
                 material(keys().other_ca, keys().node2_of_other_ca));
}

TEST(TlsTransporterTest, AcceptorFromAnotherCaIsRefused) {
  expect_refused(material(keys().other_ca, keys().node1_of_other_ca),
                 material(keys().ca, keys().node[2]));
}

TEST(TlsTransporterTest, CaFileMayBeABundle) {
  // Node 1's CA file holds two CAs (as during a CA rotation); the one that signed node
  // 2 is second, so the link proves the whole bundle is trusted.
  const TlsMaterial m1{keys().other_ca.cert_pem + keys().ca.cert_pem, keys().node[1].cert_pem,
                       keys().node[1].key_pem};
  Recorder r1, r2;
  auto t1 = make_transporter(options_for(1, {{.node_id = 2}}, &m1), r1);
  const TlsMaterial m2 = material(keys().ca, keys().node[2]);
  auto t2 = make_transporter(
      options_for(2, {{.node_id = 1, .host = "127.0.0.1", .port = t1->listen_port()}}, &m2), r2);
  EXPECT_TRUE(wait_for([&] { return t1->is_connected(2) && t2->is_connected(1); }));
}

TEST(TlsTransporterTest, HelloClaimingAnotherNodeThanTheCertificateIsRefused) {
  Recorder r1;
  const TlsMaterial m1 = material(keys().ca, keys().node[1]);
  auto t1 = make_transporter(options_for(1, {{.node_id = 2}, {.node_id = 3}}, &m1), r1);
  // A TLS client with node 3's valid certificate whose hello claims node 2. (A
  // Transporter cannot be built that way: create() checks its own certificate.)
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  ASSERT_NE(ctx, nullptr);
  BIO* ca = BIO_new_mem_buf(keys().ca.cert_pem.data(), -1);
  X509* ca_cert = PEM_read_bio_X509(ca, nullptr, nullptr, nullptr);
  X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), ca_cert);
  BIO* cert = BIO_new_mem_buf(keys().node[3].cert_pem.data(), -1);
  X509* node3 = PEM_read_bio_X509(cert, nullptr, nullptr, nullptr);
  BIO* key = BIO_new_mem_buf(keys().node[3].key_pem.data(), -1);
  EVP_PKEY* node3_key = PEM_read_bio_PrivateKey(key, nullptr, nullptr, nullptr);
  ASSERT_EQ(SSL_CTX_use_certificate(ctx, node3), 1);
  ASSERT_EQ(SSL_CTX_use_PrivateKey(ctx, node3_key), 1);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  const int fd = connect_to(t1->listen_port());
  ASSERT_GE(fd, 0);
  timeval no_timeout{};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &no_timeout, sizeof(no_timeout));
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  ASSERT_EQ(SSL_connect(ssl), 1) << ERR_reason_error_string(ERR_get_error());
  Hello hello;
  hello.node_id = 2;
  hello.peer_node_id = 1;
  hello.cluster_secret = kSecret;
  const std::vector<uint8_t> bytes = encode_hello(hello).value();
  ASSERT_EQ(SSL_write(ssl, bytes.data(), static_cast<int>(bytes.size())),
            static_cast<int>(bytes.size()));
  // Node 1 closes instead of answering with its hello.
  uint8_t answer[512];
  EXPECT_LE(SSL_read(ssl, answer, sizeof(answer)), 0);
  EXPECT_FALSE(t1->is_connected(2));
  EXPECT_FALSE(t1->is_connected(3));
  EXPECT_GE(t1->stats().connections_closed_for_errors, 1u);
  SSL_free(ssl);
  ::close(fd);
  SSL_CTX_free(ctx);
  X509_free(ca_cert);
  X509_free(node3);
  EVP_PKEY_free(node3_key);
  BIO_free(ca);
  BIO_free(cert);
  BIO_free(key);
  ERR_clear_error();
}

TEST(TlsTransporterTest, PlaintextNodeAgainstTlsNodeIsRefused) {
  Recorder r1, r2;
  const TlsMaterial m1 = material(keys().ca, keys().node[1]);
  auto t1 = make_transporter(options_for(1, {{.node_id = 2}}, &m1), r1);
  auto t2 = make_transporter(
      options_for(2, {{.node_id = 1, .host = "127.0.0.1", .port = t1->listen_port()}}, nullptr),
      r2);
  ASSERT_TRUE(wait_for([&] { return t1->stats().connections_closed_for_errors >= 2; }));
  std::this_thread::sleep_for(kRefusalWatch);
  EXPECT_FALSE(t1->is_connected(2));
  EXPECT_FALSE(t2->is_connected(1));
  EXPECT_EQ(r1.events(2, LinkState::kConnected), 0u);
}

TEST(TlsTransporterTest, TlsNodeAgainstPlaintextNodeIsRefused) {
  Recorder r1, r2;
  auto t1 = make_transporter(options_for(1, {{.node_id = 2}}, nullptr), r1);
  const TlsMaterial m2 = material(keys().ca, keys().node[2]);
  auto t2 = make_transporter(
      options_for(2, {{.node_id = 1, .host = "127.0.0.1", .port = t1->listen_port()}}, &m2), r2);
  ASSERT_TRUE(wait_for([&] { return t1->stats().connections_closed_for_errors >= 2; }));
  std::this_thread::sleep_for(kRefusalWatch);
  EXPECT_FALSE(t1->is_connected(2));
  EXPECT_FALSE(t2->is_connected(1));
  EXPECT_EQ(r2.events(1, LinkState::kConnected), 0u);
}

TEST(TlsTransporterTest, GarbageAndSilenceOnTlsPortCloseOnlyThatConnection) {
  TlsPair pair;
  ASSERT_TRUE(pair.linked());
  const int garbage = connect_to(pair.t1->listen_port());
  ASSERT_GE(garbage, 0);
  const char text[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_GT(::send(garbage, text, sizeof(text) - 1, MSG_NOSIGNAL), 0);
  EXPECT_TRUE(wait_closed_by_server(garbage));
  ::close(garbage);
  // A connection that never starts its TLS handshake occupies only itself.
  const int silent = connect_to(pair.t1->listen_port());
  ASSERT_GE(silent, 0);
  // The established link is untouched.
  EXPECT_TRUE(exchange_works(*pair.t2, *pair.t1, pair.r1));
  EXPECT_TRUE(exchange_works(*pair.t1, *pair.t2, pair.r2));
  EXPECT_TRUE(pair.t1->is_connected(2));
  EXPECT_EQ(pair.r1.events(2, LinkState::kDisconnected), 0u);
  EXPECT_GE(pair.t1->stats().connections_closed_for_errors, 1u);
  ::close(silent);
}

TEST(TlsTransporterTest, SilentConnectionIsClosedByTheHandshakeTimeout) {
  Recorder r1;
  const TlsMaterial m1 = material(keys().ca, keys().node[1]);
  TransporterOptions options = options_for(1, {{.node_id = 2}}, &m1);
  options.handshake_timeout_ms = 200;
  auto t1 = make_transporter(options, r1);
  const int silent = connect_to(t1->listen_port());
  ASSERT_GE(silent, 0);
  EXPECT_TRUE(wait_closed_by_server(silent));
  EXPECT_EQ(t1->stats().connections_closed_for_errors, 1u);
  ::close(silent);
}

TEST(TlsTransporterTest, UnusableKeyMaterialFailsCreate) {
  Recorder recorder;
  auto create_with = [&](uint16_t node_id, const TlsMaterial& tls) {
    return Transporter::create(options_for(node_id, {}, &tls), recorder.receive_callback(), nullptr)
        .status();
  };
  // No material at all.
  EXPECT_TRUE(create_with(1, TlsMaterial{}).is(ErrorCode::kConfigError));
  // Node 1 with node 2's certificate: it does not name node 1.
  Status wrong_node = create_with(1, material(keys().ca, keys().node[2]));
  EXPECT_TRUE(wrong_node.is(ErrorCode::kConfigError));
  EXPECT_NE(wrong_node.message().find("does not name node 1"), std::string::npos)
      << wrong_node.message();
  // A certificate the configured CA did not sign.
  Status wrong_ca = create_with(2, material(keys().ca, keys().node2_of_other_ca));
  EXPECT_TRUE(wrong_ca.is(ErrorCode::kConfigError));
  EXPECT_NE(wrong_ca.message().find("does not verify"), std::string::npos) << wrong_ca.message();
  // Node 1's certificate with node 3's key.
  Status wrong_key = create_with(
      1, TlsMaterial{keys().ca.cert_pem, keys().node[1].cert_pem, keys().node[3].key_pem});
  EXPECT_TRUE(wrong_key.is(ErrorCode::kConfigError));
  EXPECT_NE(wrong_key.message().find("does not match"), std::string::npos) << wrong_key.message();
  // The good set works.
  EXPECT_TRUE(create_with(1, material(keys().ca, keys().node[1])).ok());
}

TEST(TlsFilesTest, SearchPathFindsFilesAndNamesTheMissingOne) {
  namespace fs = std::filesystem;
  const fs::path root =
      fs::temp_directory_path() / ("duo_tls_files_test." + std::to_string(::getpid()));
  fs::create_directories(root / "ca");
  fs::create_directories(root / "keys");
  auto write = [](const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  };
  write(root / "ca" / kTlsCaCertFile, keys().ca.cert_pem);
  write(root / "keys" / tls_node_cert_file(1), keys().node[1].cert_pem);
  const std::string path = (root / "ca").string() + ":" + (root / "keys").string();
  Result<TlsMaterial> missing = load_tls_material(path, 1);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.status().is(ErrorCode::kConfigError));
  EXPECT_NE(missing.status().message().find("NDB-Node-1.key"), std::string::npos)
      << missing.status().message();
  write(root / "keys" / tls_node_key_file(1), keys().node[1].key_pem);
  Result<TlsMaterial> loaded = load_tls_material(path, 1);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ(loaded->ca_cert_pem, keys().ca.cert_pem);
  EXPECT_EQ(loaded->node_key_pem, keys().node[1].key_pem);
  EXPECT_TRUE(TlsContext::create(*loaded, 1).ok());
  fs::remove_all(root);
}

}  // namespace
}  // namespace duo::transport
