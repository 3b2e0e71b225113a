// automatic_thread_layout() and ThreadLayout's index arithmetic.
#include "ndb-kernel/runtime/thread_layout.h"

#include <algorithm>
#include <thread>

namespace duo::kernel {

std::vector<std::string> ThreadLayout::thread_names() const {
  std::vector<std::string> names;
  std::string main = main_runs_recv ? "main+recv" : "main";
  if (main_runs_recv && ldm_threads == 0) main += "+ldm";
  names.push_back(main);
  for (uint32_t i = 0; i < separate_recv_threads(); ++i) {
    names.push_back((i == 0 && ldm_threads == 0 ? "recv+ldm" : "recv") + std::to_string(i));
  }
  for (uint32_t i = 0; i < send_threads; ++i) names.push_back("send" + std::to_string(i));
  for (uint32_t i = 0; i < tc_threads; ++i) names.push_back("tc" + std::to_string(i));
  for (uint32_t i = 0; i < ldm_threads; ++i) names.push_back("ldm" + std::to_string(i));
  return names;
}

std::string ThreadLayout::describe() const {
  std::string text =
      main_runs_recv ? "main+recv" : "main, " + std::to_string(recv_threads) + " recv";
  if (send_threads > 0) text += ", " + std::to_string(send_threads) + " send";
  text += tc_threads > 0 ? ", 1 tc" : "";
  text += ldm_threads > 0 ? ", " + std::to_string(ldm_threads) + " ldm"
                          : " (coordinator and local query work on the receive thread)";
  return text;
}

std::string ThreadLayout::validate() const {
  if (ldm_threads > kLdmThreadsMax) {
    return "at most " + std::to_string(kLdmThreadsMax) + " ldm threads are supported";
  }
  if (recv_threads == 0) return "at least one recv thread is required";
  if (main_runs_recv && recv_threads != 1) {
    return "the main thread can do the receive work only when there is one recv thread";
  }
  if (tc_threads > 1) return "at most one tc thread is supported (one coordinator per node)";
  return "";
}

ThreadLayout automatic_thread_layout(uint32_t core_count) {
  const uint32_t cores = std::max(core_count, 1u);
  if (cores <= 4) {
    return ThreadLayout{.ldm_threads = 0, .recv_threads = 1, .send_threads = 0,
                        .main_runs_recv = true};
  }
  if (cores <= 8) {
    return ThreadLayout{.ldm_threads = cores - 2, .recv_threads = 1, .send_threads = 0,
                        .main_runs_recv = false};
  }
  if (cores <= 16) {
    return ThreadLayout{.ldm_threads = cores - 4, .recv_threads = 2, .send_threads = 1,
                        .main_runs_recv = false};
  }
  const uint32_t recv = std::min(cores / 8, kRecvThreadsMax);
  const uint32_t send = std::min(cores / 16, kSendThreadsMax);
  const uint32_t ldm = std::min(cores - 1 - recv - send, kLdmThreadsMax);
  return ThreadLayout{
      .ldm_threads = ldm, .recv_threads = recv, .send_threads = send, .main_runs_recv = false};
}

uint32_t available_core_count() {
  return std::max(std::thread::hardware_concurrency(), 1u);
}

}  // namespace duo::kernel
