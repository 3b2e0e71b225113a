#include "ndb-kernel/api/cluster_connection.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "mgmd/client/mgm_commands.h"
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

std::chrono::steady_clock::time_point deadline_after(uint64_t timeout_ms) {
  return std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
}

Status timed_out(const std::string& what, uint64_t timeout_ms) {
  return Status(ErrorCode::kTemporary,
                what + " did not complete within " + std::to_string(timeout_ms) + " ms");
}

// Wake-ups the transporter's receive path owes, sent once it has let go of the cluster
// mutex: a waiter woken while the waker still holds the mutex only blocks on it again
// (two more futex calls and a context switch per answer). Null on every other thread,
// which wakes at once (its wake-ups are rare, and nobody would send deferred ones).
thread_local std::vector<std::shared_ptr<std::condition_variable>>* t_deferred_wakes = nullptr;

void wake_session(const std::shared_ptr<std::condition_variable>& changed) {
  if (t_deferred_wakes == nullptr) return changed->notify_all();
  if (t_deferred_wakes->empty() || t_deferred_wakes->back() != changed) {
    t_deferred_wakes->push_back(changed);
  }
}

}  // namespace

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

// The core's signals go out on the transporter (called with mutex_ held).
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
      core_(
          [&] {
            ApiCoreOptions core = options_.core;
            core.node_id = node_id;
            return core;
          }(),
          std::move(topology), sink_.get()) {}

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
  if (options_.require_tls || api_requires_tls(config, node_id_)) {
    const std::string tls_path = effective_tls_search_path(options_.tls_search_path);
    DUO_ASSIGN_OR_RETURN(options.tls, transport::load_tls_material(tls_path, node_id_));
    options.use_tls = true;
    DUO_LOG(INFO, kLog) << "API node " << node_id_ << ": TLS on every link, keys from " << tls_path;
  }
  DUO_ASSIGN_OR_RETURN(transporter_,
                       transport::Transporter::create(
                           options,
                           [this](kernel::Signal& signal) {
                             thread_local std::vector<std::shared_ptr<std::condition_variable>>
                                 wakes;
                             {
                               std::lock_guard<std::mutex> lock(mutex_);
                               t_deferred_wakes = &wakes;
                               core_.on_signal(signal);
                               t_deferred_wakes = nullptr;
                             }
                             for (const auto& changed : wakes) changed->notify_all();
                             wakes.clear();
                             return Status::OK();
                           },
                           [this](const transport::LinkEvent& event) {
                             bool disconnecting = false;
                             {
                               std::lock_guard<std::mutex> lock(mutex_);
                               on_link_event(event.node_id,
                                             event.state == transport::LinkState::kConnected);
                               disconnecting = disconnected_;
                             }
                             links_changed_.notify_all();
                             if (event.state == transport::LinkState::kConnected) {
                               DUO_LOG(INFO, kLog)
                                   << "API node " << node_id_ << ": link to data node "
                                   << event.node_id << " up (" << event.peer_address << ")";
                             } else if (!disconnecting) {  // our own disconnect is no news
                               DUO_LOG(WARNING, kLog)
                                   << "API node " << node_id_ << ": link to data node "
                                   << event.node_id << " down: " << event.reason;
                             }
                           }));
  DUO_RETURN_IF_ERROR(transporter_->start());
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
  // Link-down events fail what is in flight (with mutex_ taken by the callback).
  if (transporter_) transporter_->stop();
  if (mgm_ && mgm_->connected()) {
    mgm::Message bye;
    bye.head = "bye";
    // Best effort: closing the session frees the node id either way.
    mgm_->send(bye, 1000).ignore_error();
    mgm_->close();
  }
  DUO_LOG(INFO, kLog) << "API node " << node_id_ << ": disconnected";
}

void Cluster::on_link_event(uint16_t node, bool connected) {
  if (!connected) {
    linked_not_started_.erase(node);
    // Whatever mgmd said before, the node is not started now: after a restart it is
    // used again only once mgmd reports it STARTED (it may be copying meanwhile).
    if (mgm_started_) mgm_started_->erase(node);
    core_.set_node_connected(node, false);
    return;
  }
  if (mgm_started_ && mgm_started_->count(node) == 0) {
    linked_not_started_.insert(node);
    return;
  }
  core_.set_node_connected(node, true);
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
      core_.set_node_connected(*it, true);
      it = linked_not_started_.erase(it);
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
    const std::vector<uint16_t> linked = core_.connected_nodes();  // ascending
    if (disconnected_ || linked.size() == peers_.size()) return true;
    return !linked.empty() && mgm_started_ && !mgm_started_->empty() &&
           std::includes(linked.begin(), linked.end(), mgm_started_->begin(),
                         mgm_started_->end());
  });
  const size_t linked = core_.connected_nodes().size();
  if (linked == 0) {
    return Status(ErrorCode::kTemporary,
                  "no data node linked within " + std::to_string(timeout_ms) + " ms");
  }
  return linked;
}

bool Cluster::wait(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                   std::atomic<uint64_t>& waits, const std::function<bool()>& done) {
  if (done()) return true;  // answered already (e.g. from the dictionary cache)
  waits.fetch_add(1, std::memory_order_relaxed);
  return cv.wait_until(lock, deadline_after(options_.request_timeout_ms), done);
}

ApiCoreStats Cluster::stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  return core_.stats();
}

WaitCounts Cluster::wait_counts() const {
  return {waits_exec_complete_.load(std::memory_order_relaxed),
          waits_scan_result_.load(std::memory_order_relaxed),
          waits_meta_request_.load(std::memory_order_relaxed)};
}

transport::TransporterStats Cluster::transporter_stats() const {
  return transporter_ ? transporter_->stats() : transport::TransporterStats{};
}

std::unique_ptr<Session> Cluster::new_session() {
  return std::unique_ptr<Session>(new Session(this));
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
  auto cv = std::make_shared<std::condition_variable>();
  std::unique_lock<std::mutex> lock(mutex_);
  DUO_RETURN_IF_ERROR(core_.get_table(name, [pending, cv](Result<TablePtr> table) {
    pending->result = std::move(table);
    pending->done = true;
    cv->notify_all();
  }));
  if (!wait(lock, *cv, waits_meta_request_, [&] { return pending->done; })) {
    return timed_out("get_table('" + name + "')", options_.request_timeout_ms);
  }
  return pending->result;
}

Result<TablePtr> Cluster::create_table(TableDef table) {
  auto pending = std::make_shared<Pending<TablePtr>>();
  auto cv = std::make_shared<std::condition_variable>();
  const std::string name = table.schema.name;
  std::unique_lock<std::mutex> lock(mutex_);
  DUO_RETURN_IF_ERROR(core_.create_table(std::move(table), [pending, cv](Result<TablePtr> created) {
    pending->result = std::move(created);
    pending->done = true;
    cv->notify_all();
  }));
  if (!wait(lock, *cv, waits_meta_request_, [&] { return pending->done; })) {
    return timed_out("create_table('" + name + "')", options_.request_timeout_ms);
  }
  return pending->result;
}

Status Cluster::drop_table(const std::string& name) {
  DUO_ASSIGN_OR_RETURN(TablePtr table, get_table(name));
  auto pending = std::make_shared<Pending<bool>>();
  auto cv = std::make_shared<std::condition_variable>();
  std::unique_lock<std::mutex> lock(mutex_);
  DUO_RETURN_IF_ERROR(core_.drop_table(table->schema.table_id, [pending, cv](const Status& status) {
    pending->result = status.ok() ? Result<bool>(true) : Result<bool>(status);
    pending->done = true;
    cv->notify_all();
  }));
  if (!wait(lock, *cv, waits_meta_request_, [&] { return pending->done; })) {
    return timed_out("drop_table('" + name + "')", options_.request_timeout_ms);
  }
  return pending->result.ok() ? Status::OK() : pending->result.status();
}

Result<TablePtr> Cluster::alter_table(TableDef table) {
  auto pending = std::make_shared<Pending<TablePtr>>();
  auto cv = std::make_shared<std::condition_variable>();
  const std::string name = table.schema.name;
  std::unique_lock<std::mutex> lock(mutex_);
  DUO_RETURN_IF_ERROR(core_.alter_table(std::move(table), [pending, cv](Result<TablePtr> altered) {
    pending->result = std::move(altered);
    pending->done = true;
    cv->notify_all();
  }));
  if (!wait(lock, *cv, waits_meta_request_, [&] { return pending->done; })) {
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
  auto cv = std::make_shared<std::condition_variable>();
  std::unique_lock<std::mutex> lock(mutex_);
  DUO_RETURN_IF_ERROR(core_.list_tables([pending, cv](Result<Tables> tables) {
    pending->result = std::move(tables);
    pending->done = true;
    cv->notify_all();
  }));
  if (!wait(lock, *cv, waits_meta_request_, [&] { return pending->done; })) {
    return timed_out("list_tables", options_.request_timeout_ms);
  }
  return pending->result;
}

Result<std::vector<protocol::DbinfoOperation>> Cluster::dbinfo_operations() {
  using Rows = std::vector<protocol::DbinfoOperation>;
  auto pending = std::make_shared<Pending<Rows>>();
  auto cv = std::make_shared<std::condition_variable>();
  std::unique_lock<std::mutex> lock(mutex_);
  DUO_RETURN_IF_ERROR(core_.dbinfo_operations([pending, cv](Result<Rows> rows) {
    pending->result = std::move(rows);
    pending->done = true;
    cv->notify_all();
  }));
  if (!wait(lock, *cv, waits_meta_request_, [&] { return pending->done; })) {
    return timed_out("dbinfo_operations", options_.request_timeout_ms);
  }
  return pending->result;
}

// ---- Session ----

Session::~Session() = default;

Result<std::unique_ptr<Transaction>> Session::begin(const TableDef* hint_table,
                                                    const storage::AttrValues* hint_key) {
  std::lock_guard<std::mutex> lock(cluster_->mutex_);
  DUO_ASSIGN_OR_RETURN(uint64_t api_tx, cluster_->core_.begin(hint_table, hint_key));
  return std::unique_ptr<Transaction>(new Transaction(this, api_tx));
}

size_t Session::poll(uint64_t timeout_ms) {
  size_t ran = 0;
  std::unique_lock<std::mutex> lock(cluster_->mutex_);
  changed_->wait_until(lock, deadline_after(timeout_ms), [this] { return !completed_.empty(); });
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
  Cluster& cluster = *session_->cluster_;
  std::lock_guard<std::mutex> lock(cluster.mutex_);
  if (!closed_) cluster.core_.close(api_tx_);
  std::erase(session_->completed_, this);
}

Result<uint32_t> Transaction::read(const TableDef& table, storage::AttrValues key,
                                   std::vector<uint16_t> columns, LockMode lock_mode,
                                   OpOptions options) {
  std::lock_guard<std::mutex> lock(session_->cluster_->mutex_);
  return session_->cluster_->core_.read(api_tx_, table, std::move(key), std::move(columns),
                                        lock_mode, options);
}

Result<uint32_t> Transaction::insert(const TableDef& table, storage::AttrValues row,
                                     OpOptions options) {
  std::lock_guard<std::mutex> lock(session_->cluster_->mutex_);
  return session_->cluster_->core_.insert(api_tx_, table, std::move(row), options);
}

Result<uint32_t> Transaction::update(const TableDef& table, storage::AttrValues key,
                                     storage::AttrValues values, OpOptions options) {
  std::lock_guard<std::mutex> lock(session_->cluster_->mutex_);
  return session_->cluster_->core_.update(api_tx_, table, std::move(key), std::move(values),
                                          options);
}

Result<uint32_t> Transaction::write(const TableDef& table, storage::AttrValues row,
                                    OpOptions options) {
  std::lock_guard<std::mutex> lock(session_->cluster_->mutex_);
  return session_->cluster_->core_.write(api_tx_, table, std::move(row), options);
}

Result<uint32_t> Transaction::remove(const TableDef& table, storage::AttrValues key,
                                     OpOptions options) {
  std::lock_guard<std::mutex> lock(session_->cluster_->mutex_);
  return session_->cluster_->core_.remove(api_tx_, table, std::move(key), options);
}

Result<uint32_t> Transaction::interpreted_update(const TableDef& table, storage::AttrValues key,
                                                 const storage::InterpretedUpdate& program,
                                                 OpOptions options) {
  std::lock_guard<std::mutex> lock(session_->cluster_->mutex_);
  return session_->cluster_->core_.interpreted_update(api_tx_, table, std::move(key), program,
                                                      options);
}

Status Transaction::start_execute(ExecType type) {
  if (closed_) return Status(ErrorCode::kTransactionState, "transaction was closed (timed out)");
  executing_ = true;
  Session* session = session_;
  Status started = session_->cluster_->core_.execute(
      api_tx_, type, [this, session](uint64_t, const Status& status) {
        // Runs with the cluster mutex held (ApiCore callbacks run inside core calls).
        executing_ = false;
        status_ = status;
        status_.ignore_error();  // the caller reads it from execute() or its callback
        if (async_done_) session->completed_.push_back(this);
        wake_session(session->changed_);
      });
  if (!started.ok()) executing_ = false;
  return started;
}

Status Transaction::execute(ExecType type) {
  Cluster& cluster = *session_->cluster_;
  std::unique_lock<std::mutex> lock(cluster.mutex_);
  DUO_RETURN_IF_ERROR(start_execute(type));
  if (!cluster.wait(lock, *session_->changed_, cluster.waits_exec_complete_,
                    [this] { return !executing_; })) {
    // Give up on it: the core forgets it and rolls it back at the coordinator.
    cluster.core_.close(api_tx_);
    closed_ = true;
    executing_ = false;
    return timed_out("transaction execute", cluster.options_.request_timeout_ms);
  }
  return status_;
}

Status Transaction::execute_async(ExecType type, AsyncCallback done) {
  std::lock_guard<std::mutex> lock(session_->cluster_->mutex_);
  async_done_ = std::move(done);
  Status started = start_execute(type);
  if (!started.ok()) async_done_ = nullptr;
  return started;
}

Result<OpResult> Transaction::result(uint32_t op_index) {
  std::lock_guard<std::mutex> lock(session_->cluster_->mutex_);
  DUO_ASSIGN_OR_RETURN(const OpResult* result,
                       session_->cluster_->core_.op_result(api_tx_, op_index));
  return *result;
}

TxState Transaction::state() {
  std::lock_guard<std::mutex> lock(session_->cluster_->mutex_);
  if (closed_) return TxState::kAborted;
  Result<TxState> state = session_->cluster_->core_.state(api_tx_);
  return state.ok() ? *state : TxState::kAborted;
}

uint32_t Transaction::commit_gci() {
  std::lock_guard<std::mutex> lock(session_->cluster_->mutex_);
  Result<uint32_t> gci = session_->cluster_->core_.commit_gci(api_tx_);
  return gci.ok() ? *gci : 0;
}

Result<std::unique_ptr<ScanCursor>> Transaction::scan(const TableDef& table, const ScanSpec& spec) {
  std::lock_guard<std::mutex> lock(session_->cluster_->mutex_);
  Session* session = session_;
  DUO_ASSIGN_OR_RETURN(uint32_t scan_id,
                       session_->cluster_->core_.scan(api_tx_, table, spec, [session](uint32_t) {
                         wake_session(session->changed_);
                       }));
  return std::unique_ptr<ScanCursor>(new ScanCursor(session_, scan_id));
}

// ---- ScanCursor ----

ScanCursor::~ScanCursor() {
  std::lock_guard<std::mutex> lock(session_->cluster_->mutex_);
  session_->cluster_->core_.close_scan(scan_id_);
}

Result<bool> ScanCursor::next(storage::AttrValues* row) {
  Cluster& cluster = *session_->cluster_;
  std::unique_lock<std::mutex> lock(cluster.mutex_);
  std::optional<storage::RowBatch::Row> fetched;
  Result<ScanFetch> fetch = ScanFetch::kWaiting;
  const bool arrived = cluster.wait(lock, *session_->changed_, cluster.waits_scan_result_, [&] {
    fetch = cluster.core_.next_row(scan_id_, &fetched);
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
  return true;
}

}  // namespace duo::api
