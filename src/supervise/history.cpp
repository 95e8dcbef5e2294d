#include "supervise/history.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "util/atomic_file.hpp"

namespace gl {
namespace {

constexpr size_t kMaxStateBytes = 64 * 1024;
constexpr size_t kMaxEventsBytes = 16 * 1024 * 1024;

nlohmann::json event_json(const SupervisorEvent& event) {
  return {{"time_usec", event.time_usec}, {"kind", event.kind},
          {"evidence", event.evidence},   {"action", event.action},
          {"gpu_level", event.gpu_level}, {"host_level", event.host_level}};
}

}  // namespace

std::string event_to_json(const SupervisorEvent& event) {
  return event_json(event).dump();
}

Result<SupervisorState> History::state() const {
  const auto path = directory_ / "supervisor.json";
  SupervisorState state;
  if (!std::filesystem::exists(path)) return state;
  auto text = read_file(path, kMaxStateBytes);
  if (!text) return std::unexpected(text.error());
  auto json = nlohmann::json::parse(*text, nullptr, false);
  if (!json.is_object()) return failf("Failed to read '{}': not a JSON object", path.string());
  state.consecutive_failures = json.value("consecutive_failures", 0LL);
  state.gpu_level = json.value("gpu_level", 0);
  state.host_level = json.value("host_level", 0);
  state.last_failure_usec = json.value("last_failure_usec", int64_t{0});
  state.last_stable_usec = json.value("last_stable_usec", int64_t{0});
  state.last_class = json.value("last_class", std::string{});
  state.cgroup_oom_kills = json.value("cgroup_oom_kills", 0LL);
  return state;
}

Result<void> History::save(const SupervisorState& state) const {
  nlohmann::json json{{"consecutive_failures", state.consecutive_failures},
                      {"gpu_level", state.gpu_level},
                      {"host_level", state.host_level},
                      {"last_failure_usec", state.last_failure_usec},
                      {"last_stable_usec", state.last_stable_usec},
                      {"last_class", state.last_class},
                      {"cgroup_oom_kills", state.cgroup_oom_kills}};
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  return write_file_atomically(directory_ / "supervisor.json", json.dump(2) + "\n");
}

Result<void> History::append(const SupervisorEvent& event) const {
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  const auto path = directory_ / "events.jsonl";
  // One write(2) of one line with O_APPEND: concurrent writers never interleave within a line.
  const std::string line = event_to_json(event) + "\n";
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return failf("Failed to open '{}': {}", path.string(), std::strerror(errno));
  ssize_t written = ::write(fd, line.data(), line.size());
  int saved = errno;
  ::fsync(fd);
  ::close(fd);
  if (written != static_cast<ssize_t>(line.size()))
    return failf("Failed to append to '{}': {}", path.string(), std::strerror(saved));
  return {};
}

Result<std::vector<SupervisorEvent>> History::events(size_t count) const {
  const auto path = directory_ / "events.jsonl";
  std::vector<SupervisorEvent> events;
  if (!std::filesystem::exists(path)) return events;
  auto text = read_file(path, kMaxEventsBytes);
  if (!text) return std::unexpected(text.error());
  size_t start = 0;
  while (start < text->size()) {
    size_t end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    auto json = nlohmann::json::parse(text->substr(start, end - start), nullptr, false);
    start = end + 1;
    if (!json.is_object()) continue;
    SupervisorEvent event;
    event.time_usec = json.value("time_usec", int64_t{0});
    event.kind = json.value("kind", std::string{});
    event.evidence = json.value("evidence", std::string{});
    event.action = json.value("action", std::string{});
    event.gpu_level = json.value("gpu_level", 0);
    event.host_level = json.value("host_level", 0);
    events.push_back(std::move(event));
  }
  if (events.size() > count) events.erase(events.begin(), events.end() - static_cast<long>(count));
  return events;
}

}  // namespace gl
