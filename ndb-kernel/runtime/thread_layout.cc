// automatic_thread_layout() and ThreadLayout's index arithmetic.
#include "ndb-kernel/runtime/thread_layout.h"

#include <algorithm>
#include <thread>

namespace duo::kernel {

std::vector<std::string> ThreadLayout::thread_names() const {
  std::vector<std::string> names;
  names.push_back(main_runs_recv ? "main+recv" : "main");
  for (uint32_t i = 0; i < separate_recv_threads(); ++i)
    names.push_back("recv" + std::to_string(i));
  for (uint32_t i = 0; i < send_threads; ++i) names.push_back("send" + std::to_string(i));
  for (uint32_t i = 0; i < ldm_threads; ++i) names.push_back("ldm" + std::to_string(i));
  return names;
}

std::string ThreadLayout::describe() const {
  std::string text =
      main_runs_recv ? "main+recv" : "main, " + std::to_string(recv_threads) + " recv";
  if (send_threads > 0) text += ", " + std::to_string(send_threads) + " send";
  text += ", " + std::to_string(ldm_threads) + " ldm";
  return text;
}

std::string ThreadLayout::validate() const {
  if (ldm_threads == 0) return "at least one ldm thread is required";
  if (ldm_threads > kLdmThreadsMax) {
    return "at most " + std::to_string(kLdmThreadsMax) + " ldm threads are supported";
  }
  if (recv_threads == 0) return "at least one recv thread is required";
  if (main_runs_recv && recv_threads != 1) {
    return "the main thread can do the receive work only when there is one recv thread";
  }
  return "";
}

ThreadLayout automatic_thread_layout(uint32_t core_count) {
  const uint32_t cores = std::max(core_count, 1u);
  ThreadLayout layout;
  if (cores <= 2) {
    layout = ThreadLayout{
        .ldm_threads = 1, .recv_threads = 1, .send_threads = 0, .main_runs_recv = true};
  } else if (cores <= 4) {
    layout = ThreadLayout{
        .ldm_threads = cores - 1, .recv_threads = 1, .send_threads = 0, .main_runs_recv = true};
  } else if (cores <= 8) {
    layout = ThreadLayout{
        .ldm_threads = cores - 2, .recv_threads = 1, .send_threads = 0, .main_runs_recv = false};
  } else if (cores <= 16) {
    layout = ThreadLayout{
        .ldm_threads = cores - 4, .recv_threads = 2, .send_threads = 1, .main_runs_recv = false};
  } else {
    const uint32_t recv = std::min(cores / 8, kRecvThreadsMax);
    const uint32_t send = std::min(cores / 16, kSendThreadsMax);
    const uint32_t ldm = std::min(cores - 1 - recv - send, kLdmThreadsMax);
    layout = ThreadLayout{
        .ldm_threads = ldm, .recv_threads = recv, .send_threads = send, .main_runs_recv = false};
  }
  return layout;
}

uint32_t available_core_count() {
  return std::max(std::thread::hardware_concurrency(), 1u);
}

}  // namespace duo::kernel
