#include "ndb-kernel/api/cluster_connection.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "mgmd/client/mgm_commands.h"
#include "ndb-kernel/common/clock.h"
#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/transport/tls_files.h"

#ifndef DUO_VERSION
#define DUO_VERSION "0.0.0"
#endif

namespace duo::api {

namespace {

constexpr const char* kLog = "api";

uint32_t version_number() {
  unsigned major = 0, minor = 0, patch = 0;
  std::sscanf(DUO_VERSION, "%u.%u.%u", &major, &minor, &patch);
  return (major << 16) | (minor << 8) | patch;
}

uint64_t now_ns() {
  return real_clock().now_ns();
}

std::chrono::steady_clock::time_point deadline_after(uint64_t timeout_ms) {
  return std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
}

Status timed_out(const std::string& what, uint64_t timeout_ms) {
  return Status(ErrorCode::kTemporary,
                what + " did not complete within " + std::to_string(timeout_ms) + " ms");
}

void add_stats(ApiCoreStats* sum, const ApiCoreStats& add) {
  sum->transactions_begun += add.transactions_begun;
  sum->transactions_committed += add.transactions_committed;
  sum->transactions_aborted += add.transactions_aborted;
  sum->batches_executed += add.batches_executed;
  sum->operations_sent += add.operations_sent;
  sum->scans_started += add.scans_started;
  sum->scan_batches_received += add.scan_batches_received;
  sum->stray_signals += add.stray_signals;
  sum->malformed_signals += add.malformed_signals;
  sum->cache_hits += add.cache_hits;
  sum->cache_misses += add.cache_misses;
}

}  // namespace

namespace {

// A binary wake-up for one waiting thread, on a futex: release() costs a system call
// only when the thread sleeps, and the wait sleeps at once. (std::counting_semaphore
// spins with sched_yield first: on a 2-core machine each yield is an involuntary
// context switch, measured as +1.5 per point select.)
class Wakeup {
 public:
  // Wakes the waiting thread, or makes its next wait return at once.
  void release() {
    if (state_.exchange(kSignalled, std::memory_order_release) == kSleeping) {
      futex(FUTEX_WAKE_PRIVATE, 1, nullptr);
    }
  }
  // Waits until released or the steady clock passes `deadline_ns`; true if released.
  // One waiting thread at a time.
  bool wait_until(uint64_t deadline_ns) {
    for (;;) {
      uint32_t expected = kSignalled;
      if (state_.compare_exchange_strong(expected, kIdle, std::memory_order_acquire)) return true;
      if (expected == kIdle &&
          !state_.compare_exchange_strong(expected, kSleeping, std::memory_order_relaxed)) {
        continue;  // released meanwhile
      }
      if (real_clock().now_ns() >= deadline_ns) {
        return state_.exchange(kIdle, std::memory_order_acquire) == kSignalled;
      }
      timespec at{};
      at.tv_sec = static_cast<time_t>(deadline_ns / 1'000'000'000);
      at.tv_nsec = static_cast<long>(deadline_ns % 1'000'000'000);
      // Absolute CLOCK_MONOTONIC deadline (FUTEX_WAIT_BITSET), the steady clock's.
      ::syscall(SYS_futex, &state_, FUTEX_WAIT_BITSET_PRIVATE, kSleeping, &at, nullptr,
                FUTEX_BITSET_MATCH_ANY);
    }
  }

 private:
  static constexpr uint32_t kIdle = 0;
  static constexpr uint32_t kSignalled = 1;
  static constexpr uint32_t kSleeping = 2;
  void futex(int op, uint32_t value, const timespec* timeout) {
    ::syscall(SYS_futex, &state_, op, value, timeout, nullptr, 0);
  }
  std::atomic<uint32_t> state_{kIdle};
};

}  // namespace

// A thread waiting for the cluster: a session's thread, or a dictionary call. Whoever
// changes what it waits for (the poll owner delivering a signal, a link event) calls
// notify(); the waiter then re-checks under its own mutex.
struct Cluster::Waiter {
  // Set by notify(), cleared by the waiter before it re-checks: while set, a wake-up
  // is on its way and another notify() need not send one.
  std::atomic<bool> news{false};
  // It holds the poll right and may be waiting in epoll rather than on `wakeup`.
  std::atomic<bool> polling{false};
  Wakeup wakeup;
};

namespace {

// Wake-ups collected while a thread delivers signals or link events, sent once it is
// done (after it let go of the engines' mutexes: a waiter woken while the waker still
// holds its mutex only blocks on it again). Null outside such a stretch: notify() then
// wakes at once.
thread_local std::vector<std::shared_ptr<Cluster::Waiter>>* t_wakes = nullptr;

}  // namespace

void Cluster::notify(const std::shared_ptr<Waiter>& waiter) {
  if (waiter->news.exchange(true, std::memory_order_acq_rel)) return;  // one is on its way
  if (t_wakes != nullptr) {
    t_wakes->push_back(waiter);
    return;
  }
  waiter->wakeup.release();
  // News from a thread that does not poll (the mgmd poller's link changes) for the poll
  // owner: it looks at its news again once its epoll wait returns.
  if (waiter->polling.load(std::memory_order_acquire)) transporter_->wake_poller();
}

std::vector<transport::PeerConfig> data_node_peers(const config::ClusterConfig& config) {
  std::vector<transport::PeerConfig> peers;
  for (const config::ConfigSection* section : config.sections_of(config::SectionType::kDataNode)) {
    transport::PeerConfig peer;
    peer.node_id = static_cast<uint16_t>(section->node_id());
    if (Result<std::string> host = section->get_string("HostName"); host.ok() && !host->empty()) {
      peer.host = *host;
    }
    if (Result<uint64_t> port = section->get_uint("ServerPort"); port.ok()) {
      peer.port = static_cast<uint16_t>(*port);
    }
    peers.push_back(std::move(peer));
  }
  std::sort(peers.begin(), peers.end(),
            [](const auto& a, const auto& b) { return a.node_id < b.node_id; });
  return peers;
}

bool api_requires_tls(const config::ClusterConfig& config, uint32_t node_id) {
  auto requires_tls = [](const config::ConfigSection* section) {
    Result<bool> value = section->get_bool("RequireTls");
    return value.ok() && *value;
  };
  if (const config::ConfigSection* own = config.find_node(node_id); own && requires_tls(own)) {
    return true;
  }
  for (const config::ConfigSection* section : config.sections_of(config::SectionType::kDataNode)) {
    if (requires_tls(section)) return true;
  }
  return false;
}

std::string effective_tls_search_path(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (const char* from_env = std::getenv("DUO_TLS_SEARCH_PATH"); from_env && *from_env) {
    return from_env;
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/ndb-tls";
}

// The engines' signals go out on the transporter; the sending thread writes them to the
// socket itself when the link has nothing queued (TransporterOptions::send_from_caller).
class Cluster::TransporterSink final : public SignalSink {
 public:
  explicit TransporterSink(Cluster* cluster) : cluster_(cluster) {}
  Status send(kernel::Signal signal) override {
    if (cluster_->transporter_ == nullptr) {
      return Status(ErrorCode::kTemporary, "not connected to the cluster");
    }
    return cluster_->transporter_->send_remote(std::move(signal));
  }

 private:
  Cluster* const cluster_;
};

// ---- Connecting ----

Result<uint16_t> Cluster::allocate_node_id(mgm::MgmConnection& connection,
                                           const mgm::ConnectString& target, uint32_t node_id,
                                           const ClusterOptions& options) {
  DUO_RETURN_IF_ERROR(connection.connect(target, options.mgm_timeout_ms));
  mgm::Message request;
  request.head = "get nodeid";
  request.add("nodetype", "api");
  request.add("nodeid", node_id);
  request.add("name", options.name);
  request.add("version", version_number());
  request.add("endian", "little");
  DUO_ASSIGN_OR_RETURN(mgm::Message reply, connection.call(request, options.mgm_timeout_ms));
  if (Status result = mgm::reply_result(reply); !result.ok()) {
    connection.close();
    return Status(ErrorCode::kConfigError, "API node id allocation refused: " + result.message());
  }
  const std::string* id_text = reply.find("nodeid");
  auto id = id_text != nullptr ? mgm::parse_uint_arg(*id_text, config::kNodeIdMax) : std::nullopt;
  if (!id || *id == 0) {
    connection.close();
    return Status(ErrorCode::kInvalidArgument, "get nodeid reply without a valid nodeid");
  }
  return static_cast<uint16_t>(*id);
}

Result<std::unique_ptr<Cluster>> Cluster::connect(ClusterOptions options) {
  DUO_ASSIGN_OR_RETURN(mgm::ConnectString target,
                       mgm::parse_connect_string(options.connect_string));
  auto connection = std::make_unique<mgm::MgmConnection>();
  DUO_ASSIGN_OR_RETURN(uint16_t node_id,
                       allocate_node_id(*connection, target, options.node_id, options));
  mgm::Message request;
  request.head = "get config";
  request.add("nodetype", "api");
  request.add("node", node_id);
  DUO_ASSIGN_OR_RETURN(mgm::Message reply, connection->call(request, options.mgm_timeout_ms));
  DUO_RETURN_IF_ERROR(mgm::reply_result(reply));
  DUO_ASSIGN_OR_RETURN(config::ClusterConfig config,
                       config::parse_config_string(reply.body, "configuration from duo_mgmd"));
  DUO_ASSIGN_OR_RETURN(protocol::ClusterTopology topology,
                       protocol::ClusterTopology::from_config(config));
  // Links form only between processes serving the same configuration: the checksum of
  // the served text is the hello's secret (docs/formats/transport.md), as in duo_datad.
  const std::string* checksum = reply.find("checksum");
  const std::string secret = "duodb-config-" + (checksum != nullptr ? *checksum : std::string());

  std::unique_ptr<Cluster> cluster(new Cluster(std::move(options), node_id, std::move(topology)));
  cluster->mgm_target_ = target;
  cluster->mgm_ = std::move(connection);
  DUO_RETURN_IF_ERROR(cluster->start(config, secret));
  DUO_LOG(INFO, kLog) << "API node " << node_id << ": connected to " << target.host << ":"
                      << target.port << ", " << cluster->peers_.size() << " data node(s)";
  return cluster;
}

Cluster::Cluster(ClusterOptions options, uint16_t node_id, protocol::ClusterTopology topology)
    : options_(std::move(options)),
      node_id_(node_id),
      topology_(topology),
      sink_(std::make_unique<TransporterSink>(this)),
      dict_core_(
          [&] {
            ApiCoreOptions core = options_.core;
            core.node_id = node_id;
            core.block_instance = 0;
            core.schema_events = true;
            core.api_tx_counter = &api_tx_counter_;
            return core;
          }(),
          std::move(topology), sink_.get()) {
  sessions_.resize(1, nullptr);  // instance 0 is the Cluster's own engine
}

Status Cluster::start(const config::ClusterConfig& config, const std::string& secret) {
  peers_ = data_node_peers(config);
  for (const transport::PeerConfig& peer : peers_) peer_ports_.push_back(peer.port);
  transport::TransporterOptions options;
  options.node_id = node_id_;
  // Nobody dials an API node (it has the higher id), but the transporter always listens.
  options.listen_host = "127.0.0.1";
  options.listen_port = 0;
  options.cluster_secret = secret;
  options.peers = peers_;
  options.send_buffer_bytes_max = options_.send_buffer_bytes_max;
  // The poll owner runs the transporter's loop (see the file comment), and senders
  // write their frames themselves.
  options.io_thread = false;
  options.send_from_caller = true;
  if (options_.require_tls || api_requires_tls(config, node_id_)) {
    const std::string tls_path = effective_tls_search_path(options_.tls_search_path);
    DUO_ASSIGN_OR_RETURN(options.tls, transport::load_tls_material(tls_path, node_id_));
    options.use_tls = true;
    DUO_LOG(INFO, kLog) << "API node " << node_id_ << ": TLS on every link, keys from " << tls_path;
  }
  DUO_ASSIGN_OR_RETURN(
      transporter_,
      transport::Transporter::create(
          options, [this](kernel::Signal& signal) { return on_receive(signal); },
          [this](const transport::LinkEvent& event) { on_link_event(event); }));
  DUO_RETURN_IF_ERROR(transporter_->start());
  io_thread_ = std::thread([this] { run_io_thread(); });
  poll_mgm_status();  // the first ports, before the poller's first period
  mgm_poller_ = std::thread([this] { run_mgm_poller(); });
  return Status::OK();
}

Cluster::~Cluster() {
  disconnect();
}

void Cluster::disconnect() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (disconnected_) return;
    disconnected_ = true;
  }
  {
    std::lock_guard<std::mutex> lock(poller_mutex_);
    poller_stop_ = true;
  }
  poller_wake_.notify_all();
  if (mgm_poller_.joinable()) mgm_poller_.join();
  {
    std::lock_guard<std::mutex> lock(io_mutex_);
    io_stop_ = true;
  }
  io_wake_.notify_all();
  {
    std::lock_guard<std::mutex> lock(poll_mutex_);  // the receive thread may wait there
    poll_released_.notify_all();
  }
  if (transporter_) transporter_->wake_poller();
  if (io_thread_.joinable()) io_thread_.join();
  // No thread may poll from here on; wait for the one that does to let go.
  {
    std::unique_lock<std::mutex> lock(poll_mutex_);
    poll_closed_ = true;
    if (transporter_) transporter_->wake_poller();
    poll_released_.wait(lock, [this] { return !poll_owned_; });
  }
  // Link-down events fail what is in flight (delivered on this thread).
  if (transporter_) {
    std::vector<std::shared_ptr<Waiter>> wakes;
    t_wakes = &wakes;
    transporter_->stop();
    t_wakes = nullptr;
    for (const auto& waiter : wakes) waiter->wakeup.release();
  }
  if (mgm_ && mgm_->connected()) {
    mgm::Message bye;
    bye.head = "bye";
    // Best effort: closing the session frees the node id either way.
    mgm_->send(bye, 1000).ignore_error();
    mgm_->close();
  }
  DUO_LOG(INFO, kLog) << "API node " << node_id_ << ": disconnected";
}

// ---- Receiving ----

Status Cluster::on_receive(kernel::Signal& signal) {
  const uint16_t instance = signal.receiver().instance;
  if (instance == 0) {
    if (signal.id() == protocol::kNodeFailRep) {
      // A data node told us the cluster declared a data node dead: its link may still
      // be up (a frozen process), but it coordinates nothing any more. It is used
      // again only after its link went down and came back (a restart).
      std::lock_guard<std::mutex> lock(mutex_);
      set_usable(static_cast<uint16_t>(signal.word(0)), false);
      return Status::OK();
    }
    std::lock_guard<std::mutex> lock(dict_mutex_);
    dict_core_.on_signal(signal);
    return Status::OK();
  }
  std::shared_lock<std::shared_mutex> sessions(sessions_mutex_);
  Session* session = instance < sessions_.size() ? sessions_[instance] : nullptr;
  if (session == nullptr) return Status::OK();  // an answer for a session that is gone
  bool progressed = false;
  {
    std::lock_guard<std::mutex> lock(session->mutex_);
    progressed = session->core_.on_signal(signal);
  }
  // A wake-up for nothing (the dropped answer to a released read-only transaction's
  // commit, say) would cost the session a context switch.
  if (progressed) notify(session->waiter_);
  return Status::OK();
}

void Cluster::on_link_event(const transport::LinkEvent& event) {
  bool disconnecting = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    on_link_change(event.node_id, event.state == transport::LinkState::kConnected);
    disconnecting = disconnected_;
  }
  links_changed_.notify_all();
  if (event.state == transport::LinkState::kConnected) {
    DUO_LOG(INFO, kLog) << "API node " << node_id_ << ": link to data node " << event.node_id
                        << " up (" << event.peer_address << ")";
  } else if (!disconnecting) {  // our own disconnect is no news
    DUO_LOG(WARNING, kLog) << "API node " << node_id_ << ": link to data node " << event.node_id
                           << " down: " << event.reason;
  }
}

void Cluster::on_link_change(uint16_t node, bool connected) {
  if (!connected) {
    linked_not_started_.erase(node);
    // Whatever mgmd said before, the node is not started now: after a restart it is
    // used again only once mgmd reports it STARTED (it may be copying meanwhile).
    if (mgm_started_) mgm_started_->erase(node);
    set_usable(node, false);
    return;
  }
  if (mgm_started_ && mgm_started_->count(node) == 0) {
    linked_not_started_.insert(node);
    return;
  }
  set_usable(node, true);
}

void Cluster::set_usable(uint16_t node, bool usable) {
  if (usable ? !usable_.insert(node).second : usable_.erase(node) == 0) return;
  // Wake-ups go out after every engine was told (a thread collecting already sends them
  // at the end of its stretch).
  std::vector<std::shared_ptr<Waiter>> wakes;
  const bool collect = t_wakes == nullptr;
  if (collect) t_wakes = &wakes;
  {
    std::lock_guard<std::mutex> lock(dict_mutex_);
    dict_core_.set_node_connected(node, usable);
  }
  {
    std::shared_lock<std::shared_mutex> sessions(sessions_mutex_);
    for (Session* session : sessions_) {
      if (session == nullptr) continue;
      {
        std::lock_guard<std::mutex> lock(session->mutex_);
        session->core_.set_node_connected(node, usable);
      }
      notify(session->waiter_);
    }
  }
  if (collect) {
    t_wakes = nullptr;
    for (const auto& waiter : wakes) waiter->wakeup.release();
  }
}

bool Cluster::try_take_poll_right() {
  std::lock_guard<std::mutex> lock(poll_mutex_);
  if (poll_owned_ || poll_closed_) return false;
  poll_owned_ = true;
  return true;
}

void Cluster::release_poll_right() {
  std::lock_guard<std::mutex> lock(poll_mutex_);
  poll_owned_ = false;
  if (poll_closed_ || recv_thread_active_) {
    // disconnect() or the receive thread waits for it.
    poll_released_.notify_all();
    return;
  }
  // Someone must go on reading the sockets for those still waiting: the first waiter
  // whose answer has not come yet takes over (those with news wake up anyway).
  for (Waiter* waiter : poll_waiters_) {
    if (!waiter->news.load(std::memory_order_acquire)) {
      handoffs_.fetch_add(1, std::memory_order_relaxed);
      waiter->wakeup.release();
      return;
    }
  }
}

void Cluster::poll_turn(uint64_t max_wait_ms, Waiter* self) {
  (self != nullptr ? owner_turns_ : io_thread_turns_).fetch_add(1, std::memory_order_relaxed);
  std::vector<std::shared_ptr<Waiter>> wakes;
  t_wakes = &wakes;
  transporter_->poll(max_wait_ms).ignore_error();  // fails only once stopped
  t_wakes = nullptr;
  for (const auto& waiter : wakes) {
    if (waiter.get() != self) waiter->wakeup.release();
  }
}

void Cluster::wait_for_news(Waiter& waiter, uint64_t deadline_ns) {
  last_wait_ns_.store(now_ns(), std::memory_order_relaxed);
  bool owner = false;
  bool activate = false;
  {
    std::lock_guard<std::mutex> lock(poll_mutex_);
    if (!poll_owned_ && !poll_closed_ && !recv_thread_active_) {
      poll_owned_ = true;
      owner = true;
    } else {
      poll_waiters_.push_back(&waiter);
      // Waiters and the owner: enough of them make the receive thread worth its wake-ups.
      if (!recv_thread_active_ && !poll_closed_ &&
          poll_waiters_.size() + 1 >= options_.recv_thread_activation_threshold) {
        recv_thread_active_ = true;
        activate = true;
      }
    }
  }
  if (activate) {
    receive_thread_activations_.fetch_add(1, std::memory_order_relaxed);
    io_wake_.notify_all();
  }
  if (owner) {
    // This thread reads the sockets until its own answer is in.
    waiter.polling.store(true, std::memory_order_release);
    for (;;) {
      if (waiter.news.load(std::memory_order_acquire)) break;
      const uint64_t now = now_ns();
      if (now >= deadline_ns) break;
      poll_turn((deadline_ns - now + kNanosPerMilli - 1) / kNanosPerMilli, &waiter);
      {
        // disconnect() waits for the poll right: give it up at once.
        std::lock_guard<std::mutex> lock(poll_mutex_);
        if (poll_closed_) break;
      }
    }
    waiter.polling.store(false, std::memory_order_release);
    release_poll_right();
    return;
  }
  sleeps_.fetch_add(1, std::memory_order_relaxed);
  waiter.wakeup.wait_until(deadline_ns);
  std::lock_guard<std::mutex> lock(poll_mutex_);
  std::erase(poll_waiters_, &waiter);
}

bool Cluster::wait(std::unique_lock<std::mutex>& lock, Waiter& waiter,
                   std::atomic<uint64_t>& waits, const std::function<bool()>& done) {
  const uint64_t deadline_ns = now_ns() + options_.request_timeout_ms * kNanosPerMilli;
  waiter.news.store(false, std::memory_order_release);
  if (done()) return true;  // answered already (e.g. from the dictionary cache)
  waits.fetch_add(1, std::memory_order_relaxed);
  for (;;) {
    // Cleared before the check: a change after it notifies again.
    waiter.news.store(false, std::memory_order_release);
    if (done()) return true;
    if (now_ns() >= deadline_ns) return false;
    lock.unlock();
    wait_for_news(waiter, deadline_ns);
    lock.lock();
  }
}

void Cluster::run_io_thread() {
  if (options_.recv_thread_activation_threshold == 0) {
    std::lock_guard<std::mutex> lock(poll_mutex_);
    recv_thread_active_ = true;
  }
  std::unique_lock<std::mutex> lock(io_mutex_);
  while (!io_stop_) {
    bool receive_thread = false;
    {
      std::lock_guard<std::mutex> poll_lock(poll_mutex_);
      receive_thread = recv_thread_active_;
    }
    if (receive_thread) {
      lock.unlock();
      run_receive_thread();
      lock.lock();
      continue;
    }
    const bool sessions_active =
        now_ns() - last_wait_ns_.load(std::memory_order_relaxed) < 2 * kBusyTickMs * kNanosPerMilli;
    if (sessions_active) {
      // Sessions read the sockets themselves; only look now and then (or become the
      // receive thread when many wait: wait_for_news wakes us).
      io_wake_.wait_for(lock, std::chrono::milliseconds(kBusyTickMs),
                        [this] { return io_stop_.load() || recv_thread_active_.load(); });
      if (recv_thread_active_) {
        lock.unlock();
        run_receive_thread();
        lock.lock();
        continue;
      }
      if (io_stop_) return;
    }
    lock.unlock();
    if (try_take_poll_right()) {
      poll_turn(sessions_active ? 0 : kIdlePollMs, nullptr);
      release_poll_right();
    } else if (!sessions_active) {
      // Someone else polls; look again shortly.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    lock.lock();
  }
}

void Cluster::run_receive_thread() {
  // Deactivates after this long with fewer waiters than the threshold.
  constexpr uint64_t kQuietNs = 50 * kNanosPerMilli;
  {
    std::unique_lock<std::mutex> lock(poll_mutex_);
    poll_released_.wait(lock, [this] { return !poll_owned_ || poll_closed_ || io_stop_; });
    if (poll_closed_ || io_stop_) return;
    poll_owned_ = true;
  }
  uint64_t busy_until_ns = now_ns() + kQuietNs;
  while (!io_stop_) {
    poll_turn(kIdlePollMs, nullptr);
    std::lock_guard<std::mutex> lock(poll_mutex_);
    if (poll_closed_) break;
    const uint64_t now = now_ns();
    if (options_.recv_thread_activation_threshold == 0 ||
        poll_waiters_.size() >= options_.recv_thread_activation_threshold / 2) {
      busy_until_ns = now + kQuietNs;
    } else if (now >= busy_until_ns) {
      break;
    }
  }
  {
    std::lock_guard<std::mutex> lock(poll_mutex_);
    if (options_.recv_thread_activation_threshold != 0) recv_thread_active_ = false;
  }
  release_poll_right();  // hands over to a waiter, as any poll owner
}

void Cluster::run_mgm_poller() {
  std::unique_lock<std::mutex> lock(poller_mutex_);
  while (!poller_stop_) {
    poller_wake_.wait_for(lock, std::chrono::milliseconds(options_.mgm_poll_interval_ms),
                          [this] { return poller_stop_; });
    if (poller_stop_) return;
    lock.unlock();
    poll_mgm_status();
    lock.lock();
  }
}

void Cluster::poll_mgm_status() {
  if (!mgm_->connected()) {
    // The session broke (mgmd restarted): take our id again on a new one.
    Result<uint16_t> id = allocate_node_id(*mgm_, mgm_target_, node_id_, options_);
    if (!id.ok()) {
      DUO_LOG(WARNING, kLog) << "API node " << node_id_
                             << ": management server unreachable: " << id.status().message();
      return;
    }
  }
  mgm::Message request;
  request.head = "get status";
  Result<mgm::Message> reply = mgm_->call(request, options_.mgm_timeout_ms);
  if (!reply.ok()) {
    DUO_LOG(WARNING, kLog) << "API node " << node_id_ << ": lost the management server ("
                           << reply.status().message() << ")";
    mgm_->close();
    return;
  }
  if (Result<std::vector<mgm::NodeStatus>> nodes = mgm::parse_status_reply(*reply); nodes.ok()) {
    std::set<uint16_t> started;
    for (const mgm::NodeStatus& node : *nodes) {
      if (node.type == "NDB" && node.status == "STARTED") {
        started.insert(static_cast<uint16_t>(node.node_id));
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    mgm_started_ = std::move(started);
    for (auto it = linked_not_started_.begin(); it != linked_not_started_.end();) {
      if (mgm_started_->count(*it) == 0) {
        ++it;
        continue;
      }
      DUO_LOG(INFO, kLog) << "API node " << node_id_ << ": data node " << *it
                          << " started; using it";
      const uint16_t node = *it;
      it = linked_not_started_.erase(it);
      set_usable(node, true);
    }
    links_changed_.notify_all();
  }
  Result<std::map<uint16_t, uint16_t>> ports = mgm::reported_ports(*reply);
  if (!ports.ok()) {
    DUO_LOG(WARNING, kLog) << "API node " << node_id_ << ": " << ports.status().message();
    return;
  }
  for (size_t i = 0; i < peers_.size(); ++i) {
    auto it = ports->find(peers_[i].node_id);
    if (it == ports->end() || it->second == peer_ports_[i]) continue;
    peer_ports_[i] = it->second;
    Status set = transporter_->set_peer_address(peers_[i].node_id, peers_[i].host, it->second);
    if (!set.ok()) {
      DUO_LOG(WARNING, kLog) << "API node " << node_id_ << ": " << set.message();
    }
  }
}

Result<size_t> Cluster::wait_until_ready(uint64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  links_changed_.wait_until(lock, deadline_after(timeout_ms), [this] {
    const std::vector<uint16_t> linked(usable_.begin(), usable_.end());  // ascending
    if (disconnected_ || linked.size() == peers_.size()) return true;
    return !linked.empty() && mgm_started_ && !mgm_started_->empty() &&
           std::includes(linked.begin(), linked.end(), mgm_started_->begin(),
                         mgm_started_->end());
  });
  const size_t linked = usable_.size();
  if (linked == 0) {
    return Status(ErrorCode::kTemporary,
                  "no data node linked within " + std::to_string(timeout_ms) + " ms");
  }
  return linked;
}

WaitCounts Cluster::wait_counts() const {
  return {waits_exec_complete_.load(std::memory_order_relaxed),
          waits_scan_result_.load(std::memory_order_relaxed),
          waits_meta_request_.load(std::memory_order_relaxed)};
}

PollCounts Cluster::poll_counts() const {
  return {owner_turns_.load(std::memory_order_relaxed),
          io_thread_turns_.load(std::memory_order_relaxed),
          sleeps_.load(std::memory_order_relaxed), handoffs_.load(std::memory_order_relaxed),
          receive_thread_activations_.load(std::memory_order_relaxed)};
}

transport::TransporterStats Cluster::transporter_stats() const {
  return transporter_ ? transporter_->stats() : transport::TransporterStats{};
}

ApiCoreStats Cluster::stats() {
  ApiCoreStats sum;
  {
    std::lock_guard<std::mutex> lock(dict_mutex_);
    add_stats(&sum, dict_core_.stats());
  }
  std::shared_lock<std::shared_mutex> sessions(sessions_mutex_);
  add_stats(&sum, closed_sessions_stats_);
  for (Session* session : sessions_) {
    if (session == nullptr) continue;
    std::lock_guard<std::mutex> lock(session->mutex_);
    add_stats(&sum, session->core_.stats());
  }
  return sum;
}

std::unique_ptr<Session> Cluster::new_session() {
  // mutex_ first: the new engine starts from the current usable nodes, and no link event
  // can slip between reading them and the session being listed.
  std::lock_guard<std::mutex> state(mutex_);
  std::unique_lock<std::shared_mutex> sessions(sessions_mutex_);
  uint16_t instance = 0;
  if (!free_instances_.empty()) {
    instance = free_instances_.back();
    free_instances_.pop_back();
  } else if (sessions_.size() <= kSessionsMax) {
    instance = static_cast<uint16_t>(sessions_.size());
    sessions_.push_back(nullptr);
  } else {
    DUO_LOG(WARNING, kLog) << "API node " << node_id_ << ": " << kSessionsMax
                           << " sessions are open; no more";
    return nullptr;
  }
  ApiCoreOptions core = options_.core;
  core.node_id = node_id_;
  core.block_instance = instance;
  core.schema_events = false;
  core.api_tx_counter = &api_tx_counter_;
  std::unique_ptr<Session> session(new Session(this, instance, core));
  for (uint16_t node : usable_) session->core_.set_node_connected(node, true);
  sessions_[instance] = session.get();
  return session;
}

// ---- Dictionary ----

namespace {

// The answer of one synchronous dictionary request. Shared with the core's callback,
// which may run after the waiter gave up.
template <typename T>
struct Pending {
  bool done = false;
  Result<T> result = Status(ErrorCode::kInternal, "no answer");
};

}  // namespace

Result<TablePtr> Cluster::get_table(const std::string& name) {
  auto pending = std::make_shared<Pending<TablePtr>>();
  auto waiter = std::make_shared<Waiter>();
  std::unique_lock<std::mutex> lock(dict_mutex_);
  DUO_RETURN_IF_ERROR(dict_core_.get_table(name, [this, pending, waiter](Result<TablePtr> table) {
    pending->result = std::move(table);
    pending->done = true;
    notify(waiter);
  }));
  if (!wait(lock, *waiter, waits_meta_request_, [&] { return pending->done; })) {
    return timed_out("get_table('" + name + "')", options_.request_timeout_ms);
  }
  return pending->result;
}

Result<TablePtr> Cluster::create_table(TableDef table,
                                       const std::vector<BlobPartsSpec>& blob_parts) {
  DUO_ASSIGN_OR_RETURN(TablePtr created, create_one_table(std::move(table)));
  for (const BlobPartsSpec& spec : blob_parts) {
    Result<TableDef> parts = blob_parts_table_def(*created, spec.column, spec.part_bytes);
    Result<TablePtr> made = parts.ok() ? create_one_table(std::move(parts).value())
                                       : Result<TablePtr>(parts.status());
    if (!made.ok()) {
      // No half-made table: drop it with the parts tables made so far.
      Status dropped = drop_table(created->schema.name);
      dropped.ignore_error();  // the creation's error is the one to report
      return made.status();
    }
  }
  return created;
}

Result<TablePtr> Cluster::create_one_table(TableDef table) {
  auto pending = std::make_shared<Pending<TablePtr>>();
  auto waiter = std::make_shared<Waiter>();
  const std::string name = table.schema.name;
  std::unique_lock<std::mutex> lock(dict_mutex_);
  DUO_RETURN_IF_ERROR(dict_core_.create_table(std::move(table), [this, pending, waiter](Result<TablePtr> created) {
    pending->result = std::move(created);
    pending->done = true;
    notify(waiter);
  }));
  if (!wait(lock, *waiter, waits_meta_request_, [&] { return pending->done; })) {
    return timed_out("create_table('" + name + "')", options_.request_timeout_ms);
  }
  return pending->result;
}

Status Cluster::drop_table(const std::string& name) {
  DUO_ASSIGN_OR_RETURN(TablePtr table, get_table(name));
  DUO_RETURN_IF_ERROR(drop_one_table(*table));
  // The parts tables after the table: a failure in between leaves parts nobody reads,
  // never a table whose values lack their parts.
  for (uint16_t column : blob_parts_columns(*table)) {
    Result<TablePtr> parts =
        get_table(blob_parts_table_name(name, table->schema.table_id, column));
    if (!parts.ok()) {
      if (parts.status().is(ErrorCode::kNoSuchTable) || parts.status().is(ErrorCode::kNotFound)) {
        continue;  // a table made without parts tables
      }
      return parts.status();
    }
    DUO_RETURN_IF_ERROR(drop_one_table(**parts));
  }
  return Status::OK();
}

Status Cluster::drop_one_table(const TableDef& table) {
  const std::string& name = table.schema.name;
  auto pending = std::make_shared<Pending<bool>>();
  auto waiter = std::make_shared<Waiter>();
  std::unique_lock<std::mutex> lock(dict_mutex_);
  DUO_RETURN_IF_ERROR(dict_core_.drop_table(table.schema.table_id, [this, pending, waiter](const Status& status) {
    pending->result = status.ok() ? Result<bool>(true) : Result<bool>(status);
    pending->done = true;
    notify(waiter);
  }));
  if (!wait(lock, *waiter, waits_meta_request_, [&] { return pending->done; })) {
    return timed_out("drop_table('" + name + "')", options_.request_timeout_ms);
  }
  return pending->result.ok() ? Status::OK() : pending->result.status();
}

Result<TablePtr> Cluster::alter_table(TableDef table) {
  // Parts tables are named in the table's database: a move to another one takes them.
  const std::string new_name = table.schema.name;
  const uint32_t table_id = table.schema.table_id;
  std::vector<std::pair<TablePtr, std::string>> moves;
  if (!blob_parts_columns(table).empty()) {
    DUO_ASSIGN_OR_RETURN(std::vector<protocol::TableListEntry> tables, list_tables());
    std::string old_name;
    for (const protocol::TableListEntry& entry : tables) {
      if (entry.table_id == table_id) old_name = entry.name;
    }
    if (!old_name.empty() && old_name != new_name) {
      for (uint16_t column : blob_parts_columns(table)) {
        const std::string old_parts = blob_parts_table_name(old_name, table_id, column);
        const std::string new_parts = blob_parts_table_name(new_name, table_id, column);
        if (old_parts == new_parts) continue;
        Result<TablePtr> parts = get_table(old_parts);
        if (parts.ok()) moves.emplace_back(*parts, new_parts);
      }
    }
  }
  DUO_ASSIGN_OR_RETURN(TablePtr altered, alter_one_table(std::move(table)));
  for (auto& [parts, parts_name] : moves) {
    TableDef renamed = *parts;
    renamed.schema.name = parts_name;
    DUO_RETURN_IF_ERROR(alter_one_table(std::move(renamed)).status());
  }
  return altered;
}

Result<TablePtr> Cluster::alter_one_table(TableDef table) {
  auto pending = std::make_shared<Pending<TablePtr>>();
  auto waiter = std::make_shared<Waiter>();
  const std::string name = table.schema.name;
  std::unique_lock<std::mutex> lock(dict_mutex_);
  DUO_RETURN_IF_ERROR(dict_core_.alter_table(std::move(table), [this, pending, waiter](Result<TablePtr> altered) {
    pending->result = std::move(altered);
    pending->done = true;
    notify(waiter);
  }));
  if (!wait(lock, *waiter, waits_meta_request_, [&] { return pending->done; })) {
    return timed_out("alter_table('" + name + "')", options_.request_timeout_ms);
  }
  return pending->result;
}

Result<TablePtr> Cluster::create_index(const std::string& name, storage::IndexDef index) {
  DUO_ASSIGN_OR_RETURN(TablePtr table, get_table(name));
  TableDef def = *table;
  for (const storage::IndexDef& existing : def.schema.ordered_indexes) {
    if (existing.name == index.name) {
      return Status(ErrorCode::kInvalidArgument, "Duplicate key name '" + index.name + "'");
    }
  }
  def.schema.ordered_indexes.push_back(std::move(index));
  return alter_table(std::move(def));
}

Result<TablePtr> Cluster::drop_index(const std::string& name, const std::string& index_name) {
  DUO_ASSIGN_OR_RETURN(TablePtr table, get_table(name));
  TableDef def = *table;
  const size_t before = def.schema.ordered_indexes.size();
  std::erase_if(def.schema.ordered_indexes,
                [&](const storage::IndexDef& index) { return index.name == index_name; });
  if (def.schema.ordered_indexes.size() == before) {
    return Status(ErrorCode::kNotFound,
                  "Can't DROP '" + index_name + "'; check that column/key exists");
  }
  return alter_table(std::move(def));
}

Result<TablePtr> Cluster::rename_table(const std::string& name, const std::string& new_name) {
  DUO_ASSIGN_OR_RETURN(TablePtr table, get_table(name));
  TableDef def = *table;
  def.schema.name = new_name;
  return alter_table(std::move(def));
}

Result<std::vector<protocol::TableListEntry>> Cluster::list_tables() {
  using Tables = std::vector<protocol::TableListEntry>;
  auto pending = std::make_shared<Pending<Tables>>();
  auto waiter = std::make_shared<Waiter>();
  std::unique_lock<std::mutex> lock(dict_mutex_);
  DUO_RETURN_IF_ERROR(dict_core_.list_tables([this, pending, waiter](Result<Tables> tables) {
    pending->result = std::move(tables);
    pending->done = true;
    notify(waiter);
  }));
  if (!wait(lock, *waiter, waits_meta_request_, [&] { return pending->done; })) {
    return timed_out("list_tables", options_.request_timeout_ms);
  }
  return pending->result;
}

FilegroupOutcome Cluster::change_filegroup(protocol::FilegroupChange change) {
  auto pending = std::make_shared<Pending<FilegroupOutcome>>();
  auto waiter = std::make_shared<Waiter>();
  std::unique_lock<std::mutex> lock(dict_mutex_);
  Status started =
      dict_core_.change_filegroup(std::move(change), [this, pending, waiter](FilegroupOutcome outcome) {
        pending->result = std::move(outcome);
        pending->done = true;
        notify(waiter);
      });
  if (!started.ok()) return FilegroupOutcome{started, 0, 0, 0, 0};
  if (!wait(lock, *waiter, waits_meta_request_, [&] { return pending->done; })) {
    return FilegroupOutcome{timed_out("change_filegroup", options_.request_timeout_ms), 0, 0, 0, 0};
  }
  return std::move(pending->result).value();
}

Result<std::vector<protocol::FilegroupDef>> Cluster::list_filegroups() {
  using Filegroups = std::vector<protocol::FilegroupDef>;
  auto pending = std::make_shared<Pending<Filegroups>>();
  auto waiter = std::make_shared<Waiter>();
  std::unique_lock<std::mutex> lock(dict_mutex_);
  DUO_RETURN_IF_ERROR(dict_core_.list_filegroups([this, pending, waiter](Result<Filegroups> list) {
    pending->result = std::move(list);
    pending->done = true;
    notify(waiter);
  }));
  if (!wait(lock, *waiter, waits_meta_request_, [&] { return pending->done; })) {
    return timed_out("list_filegroups", options_.request_timeout_ms);
  }
  return pending->result;
}

Result<std::vector<protocol::DbinfoOperation>> Cluster::dbinfo_operations() {
  using Rows = std::vector<protocol::DbinfoOperation>;
  auto pending = std::make_shared<Pending<Rows>>();
  auto waiter = std::make_shared<Waiter>();
  std::unique_lock<std::mutex> lock(dict_mutex_);
  DUO_RETURN_IF_ERROR(dict_core_.dbinfo_operations([this, pending, waiter](Result<Rows> rows) {
    pending->result = std::move(rows);
    pending->done = true;
    notify(waiter);
  }));
  if (!wait(lock, *waiter, waits_meta_request_, [&] { return pending->done; })) {
    return timed_out("dbinfo_operations", options_.request_timeout_ms);
  }
  return pending->result;
}

// ---- Session ----

Session::Session(Cluster* cluster, uint16_t instance, ApiCoreOptions core_options)
    : cluster_(cluster),
      instance_(instance),
      waiter_(std::make_shared<Cluster::Waiter>()),
      core_(std::move(core_options), cluster->topology_, cluster->sink_.get()) {}

Session::~Session() {
  std::unique_lock<std::shared_mutex> sessions(cluster_->sessions_mutex_);
  add_stats(&cluster_->closed_sessions_stats_, core_.stats());
  cluster_->sessions_[instance_] = nullptr;
  cluster_->free_instances_.push_back(instance_);
}

Result<std::unique_ptr<Transaction>> Session::begin(const TableDef* hint_table,
                                                    const storage::AttrValues* hint_key) {
  std::lock_guard<std::mutex> lock(mutex_);
  DUO_ASSIGN_OR_RETURN(uint64_t api_tx, core_.begin(hint_table, hint_key));
  return std::unique_ptr<Transaction>(new Transaction(this, api_tx));
}

size_t Session::poll(uint64_t timeout_ms) {
  size_t ran = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  if (completed_.empty() && timeout_ms > 0) {
    // Cluster::wait is bounded by the request timeout; this one by `timeout_ms`.
    const uint64_t deadline_ns = now_ns() + timeout_ms * kNanosPerMilli;
    for (;;) {
      waiter_->news.store(false, std::memory_order_release);
      if (!completed_.empty() || now_ns() >= deadline_ns) break;
      lock.unlock();
      cluster_->wait_for_news(*waiter_, deadline_ns);
      lock.lock();
    }
  }
  // One at a time, unlocked while the callback runs: it may execute again, destroy
  // other transactions (which unlink themselves from completed_) or begin new ones.
  while (!completed_.empty()) {
    Transaction* tx = completed_.front();
    completed_.pop_front();
    Transaction::AsyncCallback done = std::move(tx->async_done_);
    tx->async_done_ = nullptr;
    const Status status = tx->status_;
    lock.unlock();
    if (done) done(*tx, status);
    ++ran;
    lock.lock();
  }
  return ran;
}

// ---- Transaction ----

Transaction::~Transaction() {
  std::lock_guard<std::mutex> lock(session_->mutex_);
  if (!closed_) session_->core_.close(api_tx_);
  std::erase(session_->completed_, this);
}

Result<uint32_t> Transaction::read(const TableDef& table, storage::AttrValues key,
                                   std::vector<uint16_t> columns, LockMode lock_mode,
                                   OpOptions options) {
  const std::vector<uint16_t> parted = blob_parts_columns(table);
  const bool reads_parts =
      !parted.empty() && (columns.empty() || std::any_of(parted.begin(), parted.end(), [&](uint16_t c) {
        return std::find(columns.begin(), columns.end(), c) != columns.end();
      }));
  std::lock_guard<std::mutex> lock(session_->mutex_);
  storage::AttrValues key_copy = reads_parts ? key : storage::AttrValues();
  DUO_ASSIGN_OR_RETURN(const uint32_t op,
                       session_->core_.read(api_tx_, table, std::move(key), std::move(columns),
                                            lock_mode, options));
  if (reads_parts) blob_reads_.push_back(BlobRead{op, table, std::move(key_copy), lock_mode});
  return op;
}

Result<uint32_t> Transaction::insert(const TableDef& table, storage::AttrValues row,
                                     OpOptions options) {
  if (!blob_parts_columns(table).empty()) {
    DUO_ASSIGN_OR_RETURN(std::vector<BlobColumn> columns, blob_columns(table));
    if (!columns.empty()) return insert_with_blobs(table, std::move(row), options, columns);
  }
  std::lock_guard<std::mutex> lock(session_->mutex_);
  return session_->core_.insert(api_tx_, table, std::move(row), options);
}

Result<uint32_t> Transaction::update(const TableDef& table, storage::AttrValues key,
                                     storage::AttrValues values, OpOptions options) {
  if (!blob_parts_columns(table).empty()) {
    DUO_ASSIGN_OR_RETURN(std::vector<BlobColumn> columns, blob_columns(table));
    // Only the blob columns the update assigns have parts to change.
    std::erase_if(columns, [&](const BlobColumn& c) { return values.find(c.column) < 0; });
    if (!columns.empty()) {
      return change_with_blobs(OpType::kUpdate, table, std::move(key), std::move(values), options,
                               columns);
    }
  }
  std::lock_guard<std::mutex> lock(session_->mutex_);
  return session_->core_.update(api_tx_, table, std::move(key), std::move(values), options);
}

Result<uint32_t> Transaction::write(const TableDef& table, storage::AttrValues row,
                                    OpOptions options) {
  if (!blob_parts_columns(table).empty()) {
    DUO_ASSIGN_OR_RETURN(std::vector<BlobColumn> columns, blob_columns(table));
    if (!columns.empty()) {
      return change_with_blobs(OpType::kWrite, table, storage::AttrValues(), std::move(row),
                               options, columns);
    }
  }
  std::lock_guard<std::mutex> lock(session_->mutex_);
  return session_->core_.write(api_tx_, table, std::move(row), options);
}

Result<uint32_t> Transaction::remove(const TableDef& table, storage::AttrValues key,
                                     OpOptions options) {
  if (!blob_parts_columns(table).empty()) {
    DUO_ASSIGN_OR_RETURN(std::vector<BlobColumn> columns, blob_columns(table));
    if (!columns.empty()) {
      return change_with_blobs(OpType::kDelete, table, std::move(key), storage::AttrValues(),
                               options, columns);
    }
  }
  std::lock_guard<std::mutex> lock(session_->mutex_);
  return session_->core_.remove(api_tx_, table, std::move(key), options);
}

Result<uint32_t> Transaction::interpreted_update(const TableDef& table, storage::AttrValues key,
                                                 const storage::InterpretedUpdate& program,
                                                 OpOptions options) {
  std::lock_guard<std::mutex> lock(session_->mutex_);
  return session_->core_.interpreted_update(api_tx_, table, std::move(key), program, options);
}

Status Transaction::start_execute(ExecType type) {
  if (closed_) return Status(ErrorCode::kTransactionState, "transaction was closed (timed out)");
  executing_ = true;
  Session* session = session_;
  Status started =
      session_->core_.execute(api_tx_, type, [this, session](uint64_t, const Status& status) {
        // Runs with the session's mutex held (ApiCore callbacks run inside core calls);
        // the thread delivering the answer wakes the session (Cluster::on_receive).
        executing_ = false;
        status_ = status;
        status_.ignore_error();  // the caller reads it from execute() or its callback
        if (async_done_) session->completed_.push_back(this);
      });
  if (!started.ok()) executing_ = false;
  return started;
}

Status Transaction::execute(ExecType type) {
  if (blob_reads_.empty() || type == ExecType::kRollback) {
    blob_reads_.clear();
    return execute_batch(type);
  }
  // The reads' parts must be read before the commit: run the batch open, read the parts,
  // then commit (the parts' shared locks go with it).
  DUO_RETURN_IF_ERROR(execute_batch(ExecType::kNoCommit));
  DUO_RETURN_IF_ERROR(complete_blob_reads());
  if (type == ExecType::kCommit) return execute_batch(ExecType::kCommit);
  return Status::OK();
}

Status Transaction::execute_batch(ExecType type) {
  blob_batch_bytes_ = 0;
  std::unique_lock<std::mutex> lock(session_->mutex_);
  DUO_RETURN_IF_ERROR(start_execute(type));
  Cluster& cluster = *session_->cluster_;
  if (!cluster.wait(lock, *session_->waiter_, cluster.waits_exec_complete_,
                    [this] { return !executing_; })) {
    // Give up on it: the core forgets it and rolls it back at the coordinator.
    session_->core_.close(api_tx_);
    closed_ = true;
    executing_ = false;
    return timed_out("transaction execute", cluster.options_.request_timeout_ms);
  }
  return status_;
}

Status Transaction::execute_async(ExecType type, AsyncCallback done) {
  if (!blob_reads_.empty()) {
    return Status(ErrorCode::kInvalidArgument,
                  "reads of BLOB/TEXT parts need execute(), not execute_async()");
  }
  std::lock_guard<std::mutex> lock(session_->mutex_);
  async_done_ = std::move(done);
  Status started = start_execute(type);
  if (!started.ok()) async_done_ = nullptr;
  return started;
}

Result<OpResult> Transaction::result(uint32_t op_index) {
  DUO_ASSIGN_OR_RETURN(OpResult result, raw_result(op_index));
  if (auto whole = blob_results_.find(op_index); whole != blob_results_.end()) {
    result.values = whole->second;
  }
  return result;
}

Result<OpResult> Transaction::raw_result(uint32_t op_index) {
  std::lock_guard<std::mutex> lock(session_->mutex_);
  DUO_ASSIGN_OR_RETURN(const OpResult* result, session_->core_.op_result(api_tx_, op_index));
  return *result;
}

TxState Transaction::state() {
  std::lock_guard<std::mutex> lock(session_->mutex_);
  if (closed_) return TxState::kAborted;
  Result<TxState> state = session_->core_.state(api_tx_);
  return state.ok() ? *state : TxState::kAborted;
}

uint32_t Transaction::commit_gci() {
  std::lock_guard<std::mutex> lock(session_->mutex_);
  Result<uint32_t> gci = session_->core_.commit_gci(api_tx_);
  return gci.ok() ? *gci : 0;
}

Result<std::unique_ptr<ScanCursor>> Transaction::scan(const TableDef& table, const ScanSpec& spec) {
  std::vector<BlobColumn> blobs;
  if (!blob_parts_columns(table).empty()) {
    DUO_ASSIGN_OR_RETURN(blobs, blob_columns(table));
    if (!spec.columns.empty()) {
      std::erase_if(blobs, [&](const BlobColumn& c) {
        return std::find(spec.columns.begin(), spec.columns.end(), c.column) == spec.columns.end();
      });
    }
  }
  ScanSpec effective = spec;
  std::vector<uint16_t> added;
  if (!blobs.empty() && !effective.columns.empty()) {
    // The parts are read by the row's key: project it too.
    for (uint16_t key_column : table.schema.primary_key) {
      if (std::find(effective.columns.begin(), effective.columns.end(), key_column) ==
          effective.columns.end()) {
        effective.columns.push_back(key_column);
        added.push_back(key_column);
      }
    }
  }
  std::lock_guard<std::mutex> lock(session_->mutex_);
  // Rows arriving wake the session through Cluster::on_receive; nothing to do here.
  DUO_ASSIGN_OR_RETURN(uint32_t scan_id,
                       session_->core_.scan(api_tx_, table, effective, [](uint32_t) {}));
  std::unique_ptr<ScanCursor> cursor(new ScanCursor(session_, scan_id));
  if (!blobs.empty()) {
    cursor->transaction_ = this;
    cursor->table_ = table;
    cursor->blob_columns_ = std::move(blobs);
    cursor->added_key_columns_ = std::move(added);
  }
  return cursor;
}

// ---- ScanCursor ----

ScanCursor::~ScanCursor() {
  std::lock_guard<std::mutex> lock(session_->mutex_);
  session_->core_.close_scan(scan_id_);
}

Result<bool> ScanCursor::next(storage::AttrValues* row) {
  Cluster& cluster = *session_->cluster_;
  std::unique_lock<std::mutex> lock(session_->mutex_);
  std::optional<storage::RowBatch::Row> fetched;
  Result<ScanFetch> fetch = ScanFetch::kWaiting;
  const bool arrived = cluster.wait(lock, *session_->waiter_, cluster.waits_scan_result_, [&] {
    fetch = session_->core_.next_row(scan_id_, &fetched);
    return !fetch.ok() || *fetch != ScanFetch::kWaiting;
  });
  if (!arrived) return timed_out("scan", cluster.options_.request_timeout_ms);
  if (!fetch.ok()) return fetch.status();
  if (*fetch == ScanFetch::kDone) return false;
  row->clear();
  for (size_t k = 0; k < fetched->size(); ++k) {
    if (fetched->is_null(k)) {
      row->add_null(fetched->column(k));
    } else {
      row->add(fetched->column(k), fetched->value(k));
    }
  }
  if (transaction_ == nullptr) return true;
  lock.unlock();  // the parts are read through the transaction, which takes the lock
  storage::AttrValues whole = *row;
  DUO_RETURN_IF_ERROR(transaction_->fetch_blob_values(table_, blob_columns_, *row, &whole));
  row->clear();
  for (size_t k = 0; k < whole.size(); ++k) {
    const storage::AttrValues::Entry& entry = whole.entry(k);
    if (std::find(added_key_columns_.begin(), added_key_columns_.end(), entry.column) !=
        added_key_columns_.end()) {
      continue;
    }
    if (entry.is_null) {
      row->add_null(entry.column);
    } else {
      row->add(entry.column, whole.value(k));
    }
  }
  return true;
}

}  // namespace duo::api
