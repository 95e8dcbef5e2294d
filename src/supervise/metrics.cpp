// SPDX-License-Identifier: Apache-2.0
#include "supervise/metrics.hpp"

#include <algorithm>
#include <functional>
#include <utility>

#include <fmt/core.h>

#include "supervise/exit_class.hpp"
#include "supervise/policy.hpp"
#include "supervise/start_timeline.hpp"

namespace gl {
namespace {

using Labels = std::vector<std::pair<std::string_view, std::string>>;

// The exposition format's label value escapes: backslash, double quote, line feed.
std::string escape_label_value(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string sample(std::string_view family, const Labels& labels, std::string_view value) {
  std::string line(family);
  line += '{';
  for (size_t i = 0; i < labels.size(); ++i)
    line += fmt::format("{}{}=\"{}\"", i ? "," : "", labels[i].first,
                        escape_label_value(labels[i].second));
  return line + "} " + std::string(value) + "\n";
}

std::string seconds(int64_t usec) {
  return fmt::format("{:.3f}", static_cast<double>(usec) / 1e6);
}

struct Family {
  std::string_view name;
  std::string_view type;
  std::string_view help;
  std::function<std::string(const ProfileMetricsInput&)> samples;
};

Labels profile_label(const ProfileMetricsInput& in) {
  return {{"profile", in.profile}};
}

// Each phase's time in the last start that became ready, summed where a phase came back; a
// phase still open at READY=1 ends there.
std::vector<std::pair<Phase, int64_t>> phase_durations(const StartTimeline& start) {
  std::vector<std::pair<Phase, int64_t>> durations;
  for (const auto& span : start.phases) {
    const int64_t end = span.end_usec ? span.end_usec : start.ready_usec;
    if (end < span.begin_usec) continue;
    auto found = std::find_if(durations.begin(), durations.end(),
                              [&](const auto& each) { return each.first == span.phase; });
    if (found == durations.end())
      durations.emplace_back(span.phase, end - span.begin_usec);
    else
      found->second += end - span.begin_usec;
  }
  return durations;
}

const StartTimeline* ready_start(const ProfileMetricsInput& in) {
  return in.state.last_start && in.state.last_start->ready_usec > 0 ? &*in.state.last_start
                                                                    : nullptr;
}

const std::vector<Family>& families() {
  static const std::vector<Family> table{
      {"gpulaunch_up", "gauge",
       "1 while the profile's unit is up (ActiveState active, activating or reloading)",
       [](const ProfileMetricsInput& in) {
         return sample("gpulaunch_up", profile_label(in), in.unit.running() ? "1" : "0");
       }},
      {"gpulaunch_ready", "gauge",
       "1 while the engine serves (run sent READY=1: ActiveState active, or activating in "
       "start-post)",
       [](const ProfileMetricsInput& in) {
         return sample("gpulaunch_ready", profile_label(in), in.unit.ready() ? "1" : "0");
       }},
      {"gpulaunch_stops_total", "counter",
       "Engine stops record-exit classified, by class, since the history began",
       [](const ProfileMetricsInput& in) {
         std::string out;
         for (ExitClass value : all_exit_classes()) {
           auto found = in.state.stops_by_class.find(value);
           out += sample(
               "gpulaunch_stops_total",
               {{"profile", in.profile}, {"class", std::string(exit_class_name(value))}},
               fmt::format("{}", found == in.state.stops_by_class.end() ? 0 : found->second));
         }
         return out;
       }},
      {"gpulaunch_consecutive_failures", "gauge",
       "Failures in a row since the engine last served restart.stable_after, whether it served "
       "before each or not; the backoff grows with it",
       [](const ProfileMetricsInput& in) {
         return sample("gpulaunch_consecutive_failures", profile_label(in),
                       fmt::format("{}", in.state.consecutive_failures));
       }},
      {"gpulaunch_failed_starts", "gauge",
       "Starts in a row that failed to serve (never ready, or died within restart.probation of "
       "ready): at restart.budget the service stays down",
       [](const ProfileMetricsInput& in) {
         return sample("gpulaunch_failed_starts", profile_label(in),
                       fmt::format("{}", failed_starts(in.state)));
       }},
      {"gpulaunch_deaths_after_serving", "gauge",
       "Deaths after serving past restart.probation since the engine last served "
       "restart.stable_after: each is restarted, forever; alert when it keeps growing",
       [](const ProfileMetricsInput& in) {
         return sample("gpulaunch_deaths_after_serving", profile_label(in),
                       fmt::format("{}", in.state.deaths_after_serving));
       }},
      {"gpulaunch_gpu_step_down_level", "gauge",
       "Steps taken down on the engine's GPU memory knobs after CUDA OOMs",
       [](const ProfileMetricsInput& in) {
         return sample("gpulaunch_gpu_step_down_level", profile_label(in),
                       fmt::format("{}", in.state.gpu_level));
       }},
      {"gpulaunch_host_step_down_level", "gauge",
       "Steps taken down on the engine's concurrency after host or request OOMs",
       [](const ProfileMetricsInput& in) {
         return sample("gpulaunch_host_step_down_level", profile_label(in),
                       fmt::format("{}", in.state.host_level));
       }},
      {"gpulaunch_last_start_duration_seconds", "gauge",
       "From the engine's process start to READY=1, in the last start that became ready",
       [](const ProfileMetricsInput& in) -> std::string {
         const StartTimeline* start = ready_start(in);
         if (!start || start->ready_usec < start->process_start_usec) return "";
         return sample("gpulaunch_last_start_duration_seconds", profile_label(in),
                       seconds(start->ready_usec - start->process_start_usec));
       }},
      {"gpulaunch_last_start_ready_time_seconds", "gauge",
       "When the last start that became ready sent READY=1, in seconds since the epoch",
       [](const ProfileMetricsInput& in) -> std::string {
         const StartTimeline* start = ready_start(in);
         if (!start) return "";
         return sample("gpulaunch_last_start_ready_time_seconds", profile_label(in),
                       seconds(start->ready_usec));
       }},
      {"gpulaunch_last_start_phase_seconds", "gauge",
       "Time spent in each phase of the last start that became ready",
       [](const ProfileMetricsInput& in) {
         std::string out;
         if (const StartTimeline* start = ready_start(in))
           for (const auto& [phase, usec] : phase_durations(*start))
             out +=
                 sample("gpulaunch_last_start_phase_seconds",
                        {{"profile", in.profile}, {"phase", std::string(start_phase_name(phase))}},
                        seconds(usec));
         return out;
       }},
      {"gpulaunch_seconds_since_progress", "gauge",
       "Seconds since run last fed systemd's watchdog (a health answer while the liveness signal "
       "showed progress or an idle engine) or the start became ready; only while the unit is "
       "active",
       [](const ProfileMetricsInput& in) -> std::string {
         if (in.unit.active_state != "active" || in.unit.watchdog_usec == 0) return "";
         const int64_t since =
             std::max<int64_t>(0, in.now_usec - static_cast<int64_t>(in.unit.watchdog_usec));
         return sample("gpulaunch_seconds_since_progress", profile_label(in), seconds(since));
       }},
      {"gpulaunch_cache_state", "gauge",
       "1 for each of the profile's caches, labelled with its state (current, stale, empty, "
       "missing, foreign)",
       [](const ProfileMetricsInput& in) {
         std::string out;
         if (in.caches)
           for (const auto& cache : *in.caches)
             out += sample("gpulaunch_cache_state",
                           {{"profile", in.profile},
                            {"cache", cache.name},
                            {"state", std::string(cache_state_name(cache.state))}},
                           "1");
         return out;
       }},
      {"gpulaunch_cache_size_bytes", "gauge", "Apparent size of each of the profile's caches",
       [](const ProfileMetricsInput& in) {
         std::string out;
         if (in.caches)
           for (const auto& cache : *in.caches)
             if (cache.usage.exists && cache.state != CacheState::foreign)
               out += sample("gpulaunch_cache_size_bytes",
                             {{"profile", in.profile}, {"cache", cache.name}},
                             fmt::format("{}", cache.usage.bytes));
         return out;
       }},
  };
  return table;
}

}  // namespace

std::string metrics_text(const std::vector<ProfileMetricsInput>& profiles) {
  std::string text;
  for (const auto& family : families()) {
    std::string samples;
    for (const auto& profile : profiles) samples += family.samples(profile);
    if (samples.empty()) continue;  // no HELP/TYPE without a sample
    text += fmt::format("# HELP {} {}\n# TYPE {} {}\n", family.name, family.help, family.name,
                        family.type);
    text += samples;
  }
  return text;
}

std::vector<MetricFamilyDoc> metric_families() {
  std::vector<MetricFamilyDoc> docs;
  for (const auto& family : families()) docs.push_back({family.name, family.type, family.help});
  return docs;
}

}  // namespace gl
