// SPDX-License-Identifier: Apache-2.0
#include "systemd/manager.hpp"

#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <map>
#include <variant>

#include "systemd/libsystemd.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

constexpr const char* kService = "org.freedesktop.systemd1";
constexpr const char* kManagerPath = "/org/freedesktop/systemd1";
constexpr const char* kManager = "org.freedesktop.systemd1.Manager";
constexpr const char* kUnit = "org.freedesktop.systemd1.Unit";
constexpr const char* kServiceIface = "org.freedesktop.systemd1.Service";

std::string describe(const sd_bus_error& error, int code) {
  if (error.message) return error.message;
  return std::strerror(-code);
}

class SdBusManager final : public SystemdManager {
 public:
  explicit SdBusManager(sd_bus* bus) : bus_(bus) {}
  ~SdBusManager() override {
    for (auto* slot : slots_) libsystemd::sym_sd_bus_slot_unref(slot);
    libsystemd::sym_sd_bus_flush_close_unref(bus_);
  }

  Result<void> subscribe() {
    sd_bus_slot* slot = nullptr;
    // On the private socket signals carry no sender, so match on path and interface only.
    int r = libsystemd::sym_sd_bus_match_signal(bus_, &slot, nullptr, kManagerPath, kManager,
                                                "JobRemoved", &SdBusManager::on_job_removed, this);
    if (r < 0) return failf("Failed to watch systemd jobs: {}", std::strerror(-r));
    slots_.push_back(slot);
    r = libsystemd::sym_sd_bus_match_signal(bus_, &slot, nullptr, nullptr,
                                            "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                            &SdBusManager::on_changed, this);
    if (r < 0) return failf("Failed to watch unit properties: {}", std::strerror(-r));
    slots_.push_back(slot);
    return call_void(kManagerPath, kManager, "Subscribe");
  }

  Result<void> reload() override { return call_void(kManagerPath, kManager, "Reload"); }

  Result<std::string> enqueue(std::string_view method, std::string_view unit) override {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message* reply = nullptr;
    const std::string name(unit), member(method);
    int r =
        libsystemd::sym_sd_bus_call_method(bus_, kService, kManagerPath, kManager, member.c_str(),
                                           &error, &reply, "ss", name.c_str(), "replace");
    if (r < 0) {
      auto message = describe(error, r);
      libsystemd::sym_sd_bus_error_free(&error);
      return failf("Failed to {} '{}': {}", verb(method), name, message);
    }
    const char* job = nullptr;
    r = libsystemd::sym_sd_bus_message_read(reply, "o", &job);
    std::string path = r >= 0 && job ? job : "";
    libsystemd::sym_sd_bus_message_unref(reply);
    if (r < 0) return failf("Failed to read the job for '{}': {}", name, std::strerror(-r));
    return path;
  }

  // Two GetAll calls (org.freedesktop.DBus.Properties) rather than one Get per property: each
  // call is a round trip through PID 1, and record-exit asks on the restart path, where PID 1
  // is also busy with the stop (a dozen round trips cost it tens of milliseconds on a busy node).
  Result<UnitStatus> status(std::string_view unit) override {
    GL_TRY(auto path, unit_path(unit));
    UnitStatus status;
    status.name = std::string(unit);
    const std::map<std::string_view, std::string*> unit_texts{
        {"LoadState", &status.load_state},
        {"ActiveState", &status.active_state},
        {"SubState", &status.sub_state},
        {"FragmentPath", &status.fragment_path}};
    const std::map<std::string_view, uint64_t*> unit_times{
        {"ActiveEnterTimestamp", &status.active_enter_usec},
        {"ActiveExitTimestamp", &status.active_exit_usec},
        {"StateChangeTimestamp", &status.state_change_usec}};
    GL_TRY_VOID(
        all_properties(path, kUnit, status.name, [&](std::string_view name, sd_bus_message* reply) {
          if (auto text = unit_texts.find(name); text != unit_texts.end())
            return read_text(reply, *text->second);
          if (auto time = unit_times.find(name); time != unit_times.end())
            return libsystemd::sym_sd_bus_message_read(reply, "v", "t", time->second);
          if (name == "DropInPaths") return read_strv(reply, status.drop_in_paths);
          return 0;
        }));
    if (!status.name.ends_with(".service") || status.load_state != "loaded") return status;
    const std::map<std::string_view, std::string*> service_texts{
        {"Result", &status.result}, {"StatusText", &status.status_text}};
    const std::map<std::string_view, uint64_t*> service_times{
        {"ExecMainStartTimestamp", &status.main_start_usec},
        {"ExecMainExitTimestamp", &status.main_exit_usec},
        {"WatchdogTimestamp", &status.watchdog_usec}};
    GL_TRY_VOID(all_properties(
        path, kServiceIface, status.name, [&](std::string_view name, sd_bus_message* reply) {
          if (auto text = service_texts.find(name); text != service_texts.end())
            return read_text(reply, *text->second);
          if (auto time = service_times.find(name); time != service_times.end())
            return libsystemd::sym_sd_bus_message_read(reply, "v", "t", time->second);
          if (name == "MainPID")
            return libsystemd::sym_sd_bus_message_read(reply, "v", "u", &status.main_pid);
          if (name == "NRestarts")
            return libsystemd::sym_sd_bus_message_read(reply, "v", "u", &status.restarts);
          if (name == "ExecMainCode")
            return libsystemd::sym_sd_bus_message_read(reply, "v", "i", &status.exec_main_code);
          if (name == "ExecMainStatus")
            return libsystemd::sym_sd_bus_message_read(reply, "v", "i", &status.exec_main_status);
          if (name == "ExecStart") return read_exec_start(reply, status.exec_start);
          return 0;
        }));
    return status;
  }

  Result<std::vector<std::string>> list_units(std::string_view pattern) override {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message* request = nullptr;
    sd_bus_message* reply = nullptr;
    int r = libsystemd::sym_sd_bus_message_new_method_call(bus_, &request, kService, kManagerPath,
                                                           kManager, "ListUnitsByPatterns");
    const std::string glob(pattern);
    if (r >= 0) r = libsystemd::sym_sd_bus_message_append(request, "as", 0);
    if (r >= 0) r = libsystemd::sym_sd_bus_message_append(request, "as", 1, glob.c_str());
    if (r >= 0) r = libsystemd::sym_sd_bus_call(bus_, request, 0, &error, &reply);
    libsystemd::sym_sd_bus_message_unref(request);
    if (r < 0) {
      auto message = describe(error, r);
      libsystemd::sym_sd_bus_error_free(&error);
      return failf("Failed to list units: {}", message);
    }
    std::vector<std::string> names;
    r = libsystemd::sym_sd_bus_message_enter_container(reply, 'a', "(ssssssouso)");
    while (r > 0) {
      const char* name = nullptr;
      r = libsystemd::sym_sd_bus_message_read(reply, "(ssssssouso)", &name, nullptr, nullptr,
                                              nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                              nullptr);
      if (r > 0) names.emplace_back(name);
    }
    libsystemd::sym_sd_bus_message_unref(reply);
    if (r < 0) return failf("Failed to read the unit list: {}", std::strerror(-r));
    return names;
  }

  Result<std::string> start_transient(const TransientService& service) override {
    sd_bus_message* request = nullptr;
    int r = libsystemd::sym_sd_bus_message_new_method_call(bus_, &request, kService, kManagerPath,
                                                           kManager, "StartTransientUnit");
    if (r >= 0)
      r = libsystemd::sym_sd_bus_message_append(request, "ss", service.unit.c_str(), "fail");
    if (r >= 0) r = libsystemd::sym_sd_bus_message_open_container(request, 'a', "(sv)");
    if (r >= 0) r = append_transient_properties(request, service);
    if (r >= 0) r = libsystemd::sym_sd_bus_message_close_container(request);
    if (r >= 0) r = libsystemd::sym_sd_bus_message_append(request, "a(sa(sv))", 0);
    if (r < 0) {
      libsystemd::sym_sd_bus_message_unref(request);
      return failf("Failed to build the transient unit '{}': {}", service.unit, std::strerror(-r));
    }
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message* reply = nullptr;
    r = libsystemd::sym_sd_bus_call(bus_, request, 0, &error, &reply);
    libsystemd::sym_sd_bus_message_unref(request);
    if (r < 0) {
      auto message = describe(error, r);
      libsystemd::sym_sd_bus_error_free(&error);
      return failf("Failed to start transient unit '{}': {}", service.unit, message);
    }
    const char* job = nullptr;
    r = libsystemd::sym_sd_bus_message_read(reply, "o", &job);
    std::string path = r >= 0 && job ? job : "";
    libsystemd::sym_sd_bus_message_unref(reply);
    if (r < 0) return failf("Failed to read the job for '{}': {}", service.unit, std::strerror(-r));
    return path;
  }

  Result<void> reset_failed(std::string_view unit) override {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    const std::string name(unit);
    int r =
        libsystemd::sym_sd_bus_call_method(bus_, kService, kManagerPath, kManager,
                                           "ResetFailedUnit", &error, nullptr, "s", name.c_str());
    if (r < 0) {
      auto message = describe(error, r);
      libsystemd::sym_sd_bus_error_free(&error);
      return failf("Failed to reset '{}': {}", name, message);
    }
    return {};
  }

  Result<std::vector<UnitFileChange>> set_enabled(std::string_view unit, bool enabled,
                                                  bool runtime) override {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message* reply = nullptr;
    const std::string name(unit);
    // org.freedesktop.systemd1(5): EnableUnitFiles(as files, b runtime, b force) -> (b
    // carries_install_info, a(sss) changes); DisableUnitFiles(as files, b runtime) -> a(sss).
    int r = enabled ? libsystemd::sym_sd_bus_call_method(bus_, kService, kManagerPath, kManager,
                                                         "EnableUnitFiles", &error, &reply, "asbb",
                                                         1, name.c_str(), runtime, false)
                    : libsystemd::sym_sd_bus_call_method(bus_, kService, kManagerPath, kManager,
                                                         "DisableUnitFiles", &error, &reply, "asb",
                                                         1, name.c_str(), runtime);
    if (r < 0) {
      auto message = describe(error, r);
      libsystemd::sym_sd_bus_error_free(&error);
      return failf("Failed to {} '{}': {}", enabled ? "enable" : "disable", name, message);
    }
    std::vector<UnitFileChange> changes;
    int carries_install_info = 0;
    if (enabled) r = libsystemd::sym_sd_bus_message_read(reply, "b", &carries_install_info);
    if (r >= 0) r = libsystemd::sym_sd_bus_message_enter_container(reply, 'a', "(sss)");
    while (r >= 0) {
      const char *type = nullptr, *file = nullptr, *source = nullptr;
      r = libsystemd::sym_sd_bus_message_read(reply, "(sss)", &type, &file, &source);
      if (r <= 0) break;
      changes.push_back({type ? type : "", file ? file : "", source ? source : ""});
    }
    if (r >= 0) r = libsystemd::sym_sd_bus_message_exit_container(reply);
    libsystemd::sym_sd_bus_message_unref(reply);
    if (r < 0)
      return failf("Failed to read what {} '{}' changed: {}", enabled ? "enabling" : "disabling",
                   name, std::strerror(-r));
    return changes;
  }

  Result<void> wait(std::chrono::milliseconds timeout) override {
    changed_ = false;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      int r;
      while ((r = libsystemd::sym_sd_bus_process(bus_, nullptr)) > 0) {
      }
      if (r < 0) return failf("Failed to talk to systemd: {}", std::strerror(-r));
      if (changed_) return {};
      auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::milliseconds::zero()) return {};
      r = libsystemd::sym_sd_bus_wait(
          bus_, static_cast<uint64_t>(
                    std::chrono::duration_cast<std::chrono::microseconds>(left).count()));
      if (r < 0 && r != -EINTR) return failf("Failed to wait for systemd: {}", std::strerror(-r));
    }
  }

  std::optional<std::string> job_result(const std::string& job) const override {
    auto it = job_results_.find(job);
    if (it == job_results_.end()) return std::nullopt;
    return it->second;
  }

 private:
  static std::string_view verb(std::string_view method) {
    if (method == "StartUnit") return "start";
    if (method == "StopUnit") return "stop";
    if (method == "RestartUnit") return "restart";
    return method;
  }

  Result<void> call_void(const char* path, const char* iface, const char* member) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = libsystemd::sym_sd_bus_call_method(bus_, kService, path, iface, member, &error, nullptr,
                                               "");
    if (r < 0) {
      auto message = describe(error, r);
      libsystemd::sym_sd_bus_error_free(&error);
      return failf("Failed to call systemd's {}: {}", member, message);
    }
    return {};
  }

  Result<std::string> unit_path(std::string_view unit) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message* reply = nullptr;
    const std::string name(unit);
    // LoadUnit also answers for units not loaded yet (LoadState tells whether they exist).
    int r = libsystemd::sym_sd_bus_call_method(bus_, kService, kManagerPath, kManager, "LoadUnit",
                                               &error, &reply, "s", name.c_str());
    if (r < 0) {
      auto message = describe(error, r);
      libsystemd::sym_sd_bus_error_free(&error);
      return failf("Failed to load unit '{}': {}", name, message);
    }
    const char* path = nullptr;
    r = libsystemd::sym_sd_bus_message_read(reply, "o", &path);
    std::string result = r >= 0 && path ? path : "";
    libsystemd::sym_sd_bus_message_unref(reply);
    if (r < 0) return failf("Failed to read the path of '{}': {}", name, std::strerror(-r));
    return result;
  }
  // GetAll of `iface` on `path`: `take` reads each (name, variant) it knows and returns > 0,
  // or returns 0 for the others, which are skipped; a negative errno stops the read.
  template <class Take>
  Result<void> all_properties(const std::string& path, const char* iface, const std::string& unit,
                              Take take) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message* reply = nullptr;
    int r = libsystemd::sym_sd_bus_call_method(bus_, kService, path.c_str(),
                                               "org.freedesktop.DBus.Properties", "GetAll", &error,
                                               &reply, "s", iface);
    if (r < 0) {
      auto message = describe(error, r);
      libsystemd::sym_sd_bus_error_free(&error);
      return failf("Failed to read the properties of '{}': {}", unit, message);
    }
    r = libsystemd::sym_sd_bus_message_enter_container(reply, 'a', "{sv}");
    while (r > 0 && (r = libsystemd::sym_sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
      const char* name = nullptr;
      r = libsystemd::sym_sd_bus_message_read(reply, "s", &name);
      if (r >= 0) r = take(std::string_view(name ? name : ""), reply);
      if (r == 0) r = libsystemd::sym_sd_bus_message_skip(reply, "v");
      if (r >= 0) r = libsystemd::sym_sd_bus_message_exit_container(reply);
      if (r >= 0) r = 1;
    }
    if (r >= 0) r = libsystemd::sym_sd_bus_message_exit_container(reply);
    libsystemd::sym_sd_bus_message_unref(reply);
    if (r < 0) return failf("Failed to read the properties of '{}': {}", unit, std::strerror(-r));
    return {};
  }

  static int read_text(sd_bus_message* reply, std::string& target) {
    const char* value = nullptr;
    int r = libsystemd::sym_sd_bus_message_read(reply, "v", "s", &value);
    if (r >= 0) target = value ? value : "";
    return r < 0 ? r : 1;
  }

  static int read_strv(sd_bus_message* reply, std::vector<std::string>& target) {
    int r = libsystemd::sym_sd_bus_message_enter_container(reply, 'v', "as");
    char** words = nullptr;
    if (r >= 0) r = libsystemd::sym_sd_bus_message_read_strv(reply, &words);
    for (char** each = words; each && *each; ++each) {
      target.emplace_back(*each);
      free(*each);
    }
    free(words);
    if (r >= 0) r = libsystemd::sym_sd_bus_message_exit_container(reply);
    return r < 0 ? r : 1;
  }

  // ExecStart (org.freedesktop.systemd1.Service, a(sasbttttuii): path, argv, ignore-failure,
  // then timestamps, pid and status of its last run; systemd src/core/dbus-execute.c, v252): the
  // first command's argv.
  static int read_exec_start(sd_bus_message* reply, std::vector<std::string>& argv) {
    int r = libsystemd::sym_sd_bus_message_enter_container(reply, 'v', "a(sasbttttuii)");
    if (r >= 0) r = libsystemd::sym_sd_bus_message_enter_container(reply, 'a', "(sasbttttuii)");
    for (bool first = true; r > 0; first = false) {
      r = libsystemd::sym_sd_bus_message_enter_container(reply, 'r', "sasbttttuii");
      if (r <= 0) break;
      r = libsystemd::sym_sd_bus_message_skip(reply, "s");
      char** words = nullptr;
      if (r >= 0)
        r = first ? libsystemd::sym_sd_bus_message_read_strv(reply, &words)
                  : libsystemd::sym_sd_bus_message_skip(reply, "as");
      for (char** each = words; each && *each; ++each) {
        argv.emplace_back(*each);
        free(*each);
      }
      free(words);
      if (r >= 0) r = libsystemd::sym_sd_bus_message_skip(reply, "bttttuii");
      if (r >= 0) r = libsystemd::sym_sd_bus_message_exit_container(reply);
      if (r >= 0) r = 1;
    }
    if (r >= 0) r = libsystemd::sym_sd_bus_message_exit_container(reply);
    if (r >= 0) r = libsystemd::sym_sd_bus_message_exit_container(reply);
    return r < 0 ? r : 1;
  }

  // One (sv) of a BusValue, in the type its signature names.
  static int append_value(sd_bus_message* m, const BusValue& value) {
    struct Append {
      sd_bus_message* m;
      int operator()(const std::string& text) const {
        return libsystemd::sym_sd_bus_message_append(m, "s", text.c_str());
      }
      int operator()(bool flag) const {
        return libsystemd::sym_sd_bus_message_append(m, "b", static_cast<int>(flag));
      }
      int operator()(uint64_t number) const {
        return libsystemd::sym_sd_bus_message_append(m, "t", number);
      }
      int operator()(int32_t number) const {
        return libsystemd::sym_sd_bus_message_append(m, "i", number);
      }
      int operator()(uint32_t number) const {
        return libsystemd::sym_sd_bus_message_append(m, "u", number);
      }
      int operator()(const std::vector<std::string>& words) const { return strings(words); }
      int operator()(const BusPairs& pairs) const {
        int r = libsystemd::sym_sd_bus_message_open_container(m, 'a', "(ss)");
        for (const auto& [first, second] : pairs)
          if (r >= 0)
            r = libsystemd::sym_sd_bus_message_append(m, "(ss)", first.c_str(), second.c_str());
        return r >= 0 ? libsystemd::sym_sd_bus_message_close_container(m) : r;
      }
      int operator()(const BusFilter& filter) const {
        int r = libsystemd::sym_sd_bus_message_open_container(m, 'r', "bas");
        if (r >= 0)
          r = libsystemd::sym_sd_bus_message_append(m, "b", static_cast<int>(filter.allow));
        if (r >= 0) r = strings(filter.entries);
        return r >= 0 ? libsystemd::sym_sd_bus_message_close_container(m) : r;
      }
      int operator()(const BusBinds& binds) const {
        int r = libsystemd::sym_sd_bus_message_open_container(m, 'a', "(ssbt)");
        for (const auto& bind : binds)
          if (r >= 0)
            r = libsystemd::sym_sd_bus_message_append(
                m, "(ssbt)", bind.source.c_str(), bind.destination.c_str(),
                static_cast<int>(bind.ignore_missing), bind.flags);
        return r >= 0 ? libsystemd::sym_sd_bus_message_close_container(m) : r;
      }
      int strings(const std::vector<std::string>& words) const {
        int r = libsystemd::sym_sd_bus_message_open_container(m, 'a', "s");
        for (const auto& word : words)
          if (r >= 0) r = libsystemd::sym_sd_bus_message_append(m, "s", word.c_str());
        return r >= 0 ? libsystemd::sym_sd_bus_message_close_container(m) : r;
      }
    };
    return std::visit(Append{m}, value);
  }

  static int append_property(sd_bus_message* m, const std::string& name, const BusValue& value) {
    const std::string signature(bus_signature(value));
    int r = libsystemd::sym_sd_bus_message_open_container(m, 'r', "sv");
    if (r >= 0) r = libsystemd::sym_sd_bus_message_append(m, "s", name.c_str());
    if (r >= 0) r = libsystemd::sym_sd_bus_message_open_container(m, 'v', signature.c_str());
    if (r >= 0) r = append_value(m, value);
    if (r >= 0) r = libsystemd::sym_sd_bus_message_close_container(m);
    return r >= 0 ? libsystemd::sym_sd_bus_message_close_container(m) : r;
  }

  static int append_transient_properties(sd_bus_message* m, const TransientService& service) {
    int r = 0;
    for (const auto& property : service.properties)
      if (r >= 0) r = append_property(m, property.name, property.value);
    for (const auto& [name, value] : {std::pair<std::string, BusValue>{"Type", std::string("exec")},
                                      {"Description", service.description},
                                      {"CollectMode", std::string("inactive")}})
      if (r >= 0) r = append_property(m, name, value);
    for (const auto& [name, fd] : {std::pair{"StandardInputFileDescriptor", service.stdin_fd},
                                   {"StandardOutputFileDescriptor", service.stdout_fd},
                                   {"StandardErrorFileDescriptor", service.stderr_fd}}) {
      if (r >= 0) r = libsystemd::sym_sd_bus_message_open_container(m, 'r', "sv");
      if (r >= 0) r = libsystemd::sym_sd_bus_message_append(m, "sv", name, "h", fd);
      if (r >= 0) r = libsystemd::sym_sd_bus_message_close_container(m);
    }
    if (service.argv.empty()) return -EINVAL;
    if (r >= 0) r = libsystemd::sym_sd_bus_message_open_container(m, 'r', "sv");
    if (r >= 0) r = libsystemd::sym_sd_bus_message_append(m, "s", "ExecStart");
    if (r >= 0) r = libsystemd::sym_sd_bus_message_open_container(m, 'v', "a(sasb)");
    if (r >= 0) r = libsystemd::sym_sd_bus_message_open_container(m, 'a', "(sasb)");
    if (r >= 0) r = libsystemd::sym_sd_bus_message_open_container(m, 'r', "sasb");
    if (r >= 0) r = libsystemd::sym_sd_bus_message_append(m, "s", service.argv.front().c_str());
    if (r >= 0) r = append_strings(m, service.argv);
    if (r >= 0)
      r = libsystemd::sym_sd_bus_message_append(m, "b", 0);  // a failing status fails the unit
    for (int level = 0; level < 4 && r >= 0; ++level)
      r = libsystemd::sym_sd_bus_message_close_container(m);
    return r;
  }

  static int append_strings(sd_bus_message* m, const std::vector<std::string>& words) {
    return append_value(m, BusValue(words));
  }

  static int on_job_removed(sd_bus_message* message, void* user, sd_bus_error*) {
    auto* self = static_cast<SdBusManager*>(user);
    uint32_t id = 0;
    const char *job = nullptr, *unit = nullptr, *result = nullptr;
    if (libsystemd::sym_sd_bus_message_read(message, "uoss", &id, &job, &unit, &result) >= 0 &&
        job && result)
      self->job_results_[job] = result;
    self->changed_ = true;
    return 0;
  }

  static int on_changed(sd_bus_message*, void* user, sd_bus_error*) {
    static_cast<SdBusManager*>(user)->changed_ = true;
    return 0;
  }

  sd_bus* bus_;
  std::vector<sd_bus_slot*> slots_;
  std::map<std::string, std::string> job_results_;
  bool changed_ = false;
};

Result<sd_bus*> open_bus(ManagerScope scope) {
  GL_TRY_VOID(libsystemd::load());
  sd_bus* bus = nullptr;
  if (scope == ManagerScope::user) {
    int r = libsystemd::sym_sd_bus_open_user(&bus);
    if (r < 0) return failf("Failed to connect to the user's systemd: {}", std::strerror(-r));
    return bus;
  }
  if (geteuid() == 0 && access("/run/systemd/private", F_OK) == 0) {
    int r = libsystemd::sym_sd_bus_new(&bus);
    if (r >= 0) r = libsystemd::sym_sd_bus_set_address(bus, "unix:path=/run/systemd/private");
    if (r >= 0) r = libsystemd::sym_sd_bus_start(bus);
    if (r >= 0) return bus;
    libsystemd::sym_sd_bus_unref(bus);
    bus = nullptr;
  }
  int r = libsystemd::sym_sd_bus_open_system(&bus);
  if (r < 0)
    return failf("Failed to connect to systemd: {} (is systemd running as PID 1?)",
                 std::strerror(-r));
  return bus;
}

}  // namespace

Result<std::unique_ptr<SystemdManager>> connect_systemd(ManagerScope scope) {
  GL_TRY(auto bus, open_bus(scope));
  auto manager = std::make_unique<SdBusManager>(bus);
  GL_TRY_VOID(manager->subscribe());
  return std::unique_ptr<SystemdManager>(std::move(manager));
}

}  // namespace gl
