// SPDX-License-Identifier: Apache-2.0
// `gpulaunch internal-man 1|5`: the build generates gpulaunch(1) and gpulaunch.toml(5) with it, so
// the pages cannot drift from the subcommands CLI11 knows and the key table validation reads.
// Hidden from --help: it is a build step, not something operators run.

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "catalog/engines.hpp"
#include "catalog/exit_codes.hpp"
#include "catalog/jit_caches.hpp"
#include "catalog/node_health.hpp"
#include "cli/context.hpp"
#include "gpulaunch_version.hpp"
#include "plan/launch_plan.hpp"
#include "profile/schema.hpp"
#include "profile/unsafe_directives.hpp"
#include "run/bridge.hpp"
#include "supervise/metrics.hpp"
#include "util/state_paths.hpp"

namespace gl {
namespace {

// Escapes text for roff. Hyphens in option-like words become \- so they render (and copy) as the
// ASCII hyphen-minus a shell needs; hyphens inside ordinary words stay typographic.
std::string roff(std::string_view text) {
  std::string out;
  bool option_word = false;
  bool word_start = true;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      option_word = false;
      word_start = true;
    } else if (word_start && c != '(' && c != '"') {
      option_word = c == '-';
      word_start = false;
    }
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-' && option_word) {
      out += "\\-";
    } else {
      out += c;
    }
  }
  // A line starting with . or ' would be read as a request.
  if (!out.empty() && (out.front() == '.' || out.front() == '\'')) out.insert(0, "\\&");
  return out;
}

// Names, keys and values: every hyphen is a literal one.
std::string literal(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  return out;
}

// Help strings are sentence fragments; the pages print them as sentences.
std::string sentence(std::string_view help) {
  std::string text = roff(help);
  if (!text.empty() && text.back() != '.') text += '.';
  return text;
}

std::string header(std::string_view title, int section, std::string_view date) {
  return fmt::format(".TH {} {} \"{}\" \"gpulaunch {}\" \"gpulaunch manual\"\n", title, section,
                     date, GPULAUNCH_VERSION);
}

// "--profiles-dir DIR" / "-h, --help" as roff, from CLI11's own description of the option.
std::string option_synopsis(const CLI::Option& option) {
  std::vector<std::string> names;
  for (const auto& name : option.get_snames()) names.push_back("\\fB\\-" + literal(name) + "\\fR");
  for (const auto& name : option.get_lnames())
    names.push_back("\\fB\\-\\-" + literal(name) + "\\fR");
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
  if (option.get_expected_max() > 0) {  // 0: a flag
    // "INT:INT in [0 - 1023]" -> "INT": the validator is described in the help text.
    std::string type = option.get_type_name();
    type = type.substr(0, type.find_first_of(": "));
    if (type.empty()) type = "VALUE";
    text += " \\fI" + literal(type) + "\\fR";
  }
  return text;
}

std::vector<const CLI::App*> visible_subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); });
}

std::string gpu_health_section();

// What `gpulaunch metrics` prints and node_exporter serves, from supervise/metrics' own table.
std::string metrics_section() {
  std::string page =
      ".SH METRICS\n"
      "\\fBgpulaunch metrics\\fR [\\fIprofile\\fR] prints Prometheus metrics in the text "
      "exposition format, for one profile or every installed one. As root, \\fB\\-\\-write\\fR "
      "writes each profile's file, \\fI" +
      literal(state_paths::metrics_file_name("PROFILE")) +
      "\\fR, into node_exporter's textfile "
      "directory \\fI" +
      literal(state_paths::kTextfileDirectory) +
      "\\fR (Debian's \\fBprometheus\\-node\\-exporter\\fR reads it by default), replaced "
      "atomically, and only where that directory exists and only root can write it. Root "
      "rewrites the file at every stop (\\fBrecord\\-exit\\fR), \\fBup\\fR, \\fBdown\\fR "
      "and \\fBrestart\\fR, and \\fIgpulaunch\\-metrics.timer\\fR every 15 seconds; "
      "\\fBdown\\fR keeps it (with \\fBgpulaunch_up\\fR 0), \\fBdown \\-\\-purge\\fR "
      "removes it. Labels: \\fBprofile\\fR, \\fBclass\\fR (the stop classes of STOPS), "
      "\\fBphase\\fR (a start's phases), \\fBcache\\fR and \\fBstate\\fR.\n";
  for (const auto& family : metric_families())
    page += fmt::format(".TP\n\\fB{}\\fR ({})\n{}\n", literal(family.name), family.type,
                        sentence(family.help));
  return page;
}

std::string command_page(const CLI::App& app, std::string_view date) {
  std::string page = header("GPULAUNCH", 1, date);
  page += ".SH NAME\ngpulaunch \\- run LLM inference servers as hardened systemd services\n";
  page += ".SH SYNOPSIS\n.B gpulaunch\n.RI [ options ] \" command \" [ arguments ]\n";
  page +=
      ".SH DESCRIPTION\n"
      "\\fBgpulaunch\\fR turns a profile, a TOML file described in \\fBgpulaunch.toml\\fR(5), into "
      "a systemd service that runs an inference server (SGLang, vLLM, TensorRT-LLM or any "
      "command) with its toolkit, environment, caches and restart policy pinned.\n"
      ".PP\n"
      "Profiles are named by their file name without \\fI.toml\\fR and looked up on the search "
      "path below; a command also accepts a path to a \\fI.toml\\fR file instead of a name.\n";
  page += ".SH OPTIONS\n";
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_positional() || !option->nonpositional()) continue;
    page += ".TP\n" + option_synopsis(*option) + "\n" + roff(option->get_description()) + "\n";
  }
  page +=
      ".SH \"MULTI-NODE\"\n"
      "\\fBup\\fR, \\fBstatus\\fR, \\fBdown\\fR and \\fBrestart\\fR with "
      "\\fB\\-\\-all\\-nodes\\fR run on every host of \\fBnodes.hosts\\fR over ssh. Each rank's "
      "\\fBup\\fR returns once that rank is ready: health 200 where the rank serves; where it "
      "runs headless (vLLM's ranks 1 and up, which serve no HTTP), once its engine holds a TCP "
      "connection to rank 0, which also feeds its watchdog. \\fBstatus\\fR shows each rank's "
      "role, \\fIserving\\fR or \\fIheadless\\fR. Before any rank starts, \\fBup\\fR and "
      "\\fBrestart\\fR with \\fB\\-\\-all\\-nodes\\fR test every rank's TCP path to rank 0's "
      "rendezvous port (rank 0 listens there, the others connect; a rank that cannot is named "
      "with \\fIrefused\\fR, \\fItimeout\\fR or \\fIno route\\fR, a port in use on rank 0 as "
      "such, and the start is refused), then compare every rank's \\fBcache\\fR "
      "\\fIprofile\\fR \\fB\\-\\-json\\fR (each cache's fingerprint and content digest) and "
      "clear each cache that differs on every rank, saying which and why; a rank that could not "
      "be read or cleared is named and the start refused.\n";
  page +=
      ".SH \"DRY RUN AND ANSIBLE\"\n"
      "\\fBup \\-\\-dry\\-run\\fR renders the unit, decides what \\fBup\\fR would do "
      "(\\fInone\\fR for a running unit that did not change, \\fIstart\\fR, or "
      "\\fIrestart\\fR for a running one whose unit changed) and evaluates the check, then "
      "prints that and the unit's diff and changes nothing; it exits 1 where \\fBup\\fR "
      "would refuse on the check. With \\fB\\-\\-json\\fR it prints one object, and with "
      "\\fB\\-\\-all\\-nodes\\fR each rank's. \\fBverify \\-\\-json\\fR and "
      "\\fBstatus \\-\\-all\\-nodes \\-\\-json\\fR answer in JSON too. The Ansible "
      "collection \\fBgpulaunch.fleet\\fR (in the source tree under \\fIansible/\\fR) wraps "
      "these answers: a task is changed only when \\fBup\\fR would start or restart.\n";
  page += ".SH COMMANDS\n";
  for (const CLI::App* sub : visible_subcommands(app)) {
    std::string usage = "\\fB" + literal(sub->get_name()) + "\\fR";
    for (const CLI::Option* option : sub->get_options()) {
      if (!option->get_positional()) continue;
      std::string name = "\\fI" + literal(option->get_name(true)) + "\\fR";
      usage += option->get_required() ? " " + name : " [" + name + "]";
    }
    bool has_options = false;
    // Options in no group are hidden (tests' --state-root), as in --help.
    auto shown = [](const CLI::Option* option) {
      return !option->get_group().empty() &&
             option->get_lnames() != std::vector<std::string>{"help"};
    };
    for (const CLI::Option* option : sub->get_options())
      has_options = has_options || (option->nonpositional() && shown(option));
    if (has_options) usage += " [\\fIoptions\\fR]";
    page += ".TP\n" + usage + "\n" + roff(sub->get_description()) + "\n";
    for (const CLI::Option* option : sub->get_options()) {
      if (!shown(option)) continue;
      std::string label = option->nonpositional()
                              ? option_synopsis(*option)
                              : "\\fI" + literal(option->get_name(true)) + "\\fR";
      page += ".RS\n.TP\n" + label + "\n" + roff(option->get_description()) + "\n.RE\n";
    }
  }
  page += gpu_health_section();
  page +=
      ".SH FILES\n"
      ".TP\n\\fI./profiles/\\fR\nProfiles next to where \\fBgpulaunch\\fR runs; searched first.\n"
      ".TP\n\\fI$XDG_CONFIG_HOME/gpulaunch/profiles/\\fR\nThe user's profiles "
      "(\\fI~/.config/gpulaunch/profiles/\\fR when \\fBXDG_CONFIG_HOME\\fR is unset).\n"
      ".TP\n\\fI/etc/gpulaunch/profiles/\\fR\nThe operator's profiles.\n"
      ".TP\n\\fI/usr/share/gpulaunch/profiles/\\fR\nExample profiles shipped with gpulaunch.\n"
      ".TP\n\\fI/usr/lib/systemd/system/gpulaunch\\-check@.service\\fR\n"
      "Runs \\fBgpulaunch check\\fR \\fIprofile\\fR once, to re-validate a node at boot.\n"
      ".TP\n\\fI/usr/lib/systemd/system/gpulaunch\\-metrics.timer\\fR\n"
      "Runs \\fBgpulaunch metrics \\-\\-write\\fR every 15 seconds (see METRICS).\n"
      ".TP\n\\fI" +
      literal(state_paths::kTextfileDirectory) + "/" +
      literal(state_paths::metrics_file_name("PROFILE")) +
      "\\fR\nA profile's metrics, for node_exporter's textfile collector.\n"
      ".TP\n\\fI/usr/share/gpulaunch/grafana/gpulaunch.json\\fR\n"
      "A Grafana dashboard over those metrics.\n"
      ".TP\n\\fI/usr/lib/systemd/catalog/gpulaunch.catalog\\fR\n"
      "What \\fBjournalctl \\-x\\fR says about each gpulaunch event and its fix.\n"
      ".PP\n"
      "A profile found earlier on the search path shadows one of the same name further down, as "
      "\\fI/etc\\fR shadows \\fI/usr\\fR for systemd units.\n";
  page +=
      ".SH STOPS\n"
      "\\fBgpulaunch events\\fR \\fIprofile\\fR lists each stop of the engine with its class, "
      "the line that decided it and what was done. A \\fIstalled\\fR stop is an engine that "
      "answered but made no forward progress (\\fBserver.liveness\\fR): the evidence is "
      "\\fBrun\\fR's stall line (which signal fired, the requests in flight, the generation "
      "token counter, how long nothing moved), and \\fBthreads:\\fR names the journal cursor "
      "of that line, below which every Python thread's stack was dumped: "
      "\\fBjournalctl \\-u gpulaunch\\-\\fR\\fIprofile\\fR\\fB.service "
      "\\-\\-cursor=\\fR\\fIcursor\\fR. A stall counts as a failure: it is restarted after the "
      "backoff and counts against \\fBrestart.budget\\fR, as a crash. \\fBstatus\\fR shows the "
      "last stall and the same command.\n"
      ".PP\n"
      "A crash whose Python traceback runs through a file inside one of the profile's caches "
      "(a frame \\fBFile \"\\fR\\fIpath\\fR\\fB\", line\\fR \\fIN\\fR\\fB, in\\fR "
      "\\fIname\\fR) is a poisoned cache: a corrupt torch.compile or JIT cache crashes every "
      "start until it is removed. \\fBrecord\\-exit\\fR moves that cache directory aside to "
      "\\fINAME\\fR\\fB.quarantined\\-\\fR\\fIYYYYmmdd\\fR\\fBT\\fR\\fIHHMMSS\\fR beside it "
      "(kept for inspection, never deleted; only a cache under the cache root or one gpulaunch "
      "created), records a \\fBcache\\-quarantined\\fR event naming the frame and the copy, and "
      "the restart comes without counting against \\fBrestart.budget\\fR or backing off. The "
      "stop right after a quarantine counts as usual, whichever cache it names. "
      "\\fBgpulaunch cache\\fR \\fIprofile\\fR lists the copies.\n";
  page += metrics_section();
  page +=
      ".SH \"WARM THE PAGE CACHE\"\n"
      "\\fBgpulaunch warm\\fR \\fIprofile\\fR reads the model's weight files "
      "(\\fI*.safetensors\\fR, \\fI*.bin\\fR, \\fI*.gguf\\fR of \\fBmodel.path\\fR, or of "
      "a hub id's snapshot in the hub cache the unit's environment names) into the page cache "
      "on \\fB\\-\\-threads\\fR threads, with progress on standard error. Files already wholly "
      "cached (mincore) are skipped; it stops before the first file that would not fit "
      "MemAvailable (in the unit, its cgroup's room under \\fBMemoryMax=\\fR where smaller) less 2 "
      "GiB, and says so. Links are followed only inside the model (a "
      "snapshot's links into its \\fIblobs/\\fR), never a FIFO or device; nothing is written. "
      "A model that is not local yet is one line on standard error saying what to run, and "
      "exit 1. With \\fBmodel.prefetch = true\\fR, \\fBrun\\fR does the same before each start, "
      "as the service user inside the unit's sandbox, with \\fBSTATUS=\\fR progress and the start "
      "timeout extended while it reads; a prefetch that cannot read is a warning line, never a "
      "failed start.\n"
      ".SH \"THE UNIT'S ENVIRONMENT\"\n"
      "\\fBgpulaunch env\\fR \\fIprofile\\fR prints every variable the unit sets for its "
      "engine (\\fBCUDA_HOME\\fR, \\fBPATH\\fR, \\fBCUDA_VISIBLE_DEVICES\\fR, the caches, "
      "\\fB[env]\\fR) as \\fBexport\\fR lines a POSIX shell sources back to the same values: "
      "\\fBeval \"$(gpulaunch env\\fR \\fIprofile\\fB)\"\\fR. A \\fB[secrets]\\fR entry is its "
      "\\fINAME\\fB_PATH\\fR in the unit's credentials directory, which exists only while the unit "
      "runs; no secret's value is printed. systemd's own per-start variables "
      "(\\fBINVOCATION_ID\\fR, \\fBNOTIFY_SOCKET\\fR) are not among them.\n";
  page +=
      ".SH \"LOGS AND THE JOURNAL\"\n"
      "gpulaunch's own lines have a level: \\fB\\-v\\fR adds debug lines, \\fB\\-q\\fR keeps "
      "warnings and errors; data on standard output is never touched. Where standard output or "
      "error is the journal (\\fBJOURNAL_STREAM\\fR), each of these lines is a native entry "
      "with \\fBPRIORITY=\\fR and the fields \\fBGPULAUNCH_PROFILE=\\fR, "
      "\\fBGPULAUNCH_CLASS=\\fR (a classified stop), \\fBGPULAUNCH_PHASE=\\fR (a start phase) "
      "and a \\fBMESSAGE_ID=\\fR per kind of event; the engine's output passes through as it "
      "is. A retried failure is a warning, a stop that stays down an error: "
      "\\fBjournalctl \\-p warning GPULAUNCH_PROFILE=\\fR\\fIprofile\\fR lists them, and "
      "\\fBjournalctl \\-x\\fR explains each with its fix from "
      "\\fI/usr/lib/systemd/catalog/gpulaunch.catalog\\fR.\n";
  page +=
      ".SH \"REPRODUCE BY HAND\"\n"
      "\\fBgpulaunch exec\\fR \\fIprofile\\fR \\fB\\-\\-\\fR \\fIcommand\\fR... runs "
      "\\fIcommand\\fR as the installed profile's service runs: a transient service started over "
      "D\\-Bus with the unit's environment (\\fBCUDA_HOME\\fR, \\fBPATH\\fR, every cache "
      "variable), user and group, working directory, state directory and sandbox "
      "(\\fBProtectSystem=strict\\fR, \\fBPrivateTmp=\\fR with a /tmp of its own, no "
      "capabilities, the same devices and system calls), with the caller's standard input, "
      "output and error; the command is looked up on the unit's \\fBPATH\\fR. It cannot write "
      "where the "
      "engine cannot. Root only; the profile must be installed (\\fBgpulaunch up\\fR). It exits "
      "with the command's status, 128 + the signal that ended it, or 125 when gpulaunch could not "
      "run it.\n";
  page +=
      ".SH \"START PHASES\"\n"
      "\\fBrun\\fR prints a line at each change of the start's phase, read from the engine's own "
      "start\\-up lines: \\fIprocess\\fR, \\fIweights\\fR, \\fIjit_compile\\fR (kernel JIT "
      "builds), "
      "\\fItorch_compile\\fR, \\fIcuda_graphs\\fR and \\fIhealth\\fR. After READY=1 the unit's "
      "\\fBExecStartPost=\\fR runs the hidden \\fBgpulaunch record\\-start\\fR as root, which "
      "reads "
      "them back from the invocation's journal and keeps the timeline in the history: "
      "\\fBup\\fR prints it when it returns, \\fBstatus\\fR shows the last start's phases with "
      "their durations, \\fBevents \\-\\-json\\fR each \\fIstarted\\fR event's phases. It never "
      "fails the unit. While the engine starts, the JIT and compile caches the unit pins are "
      "measured every few seconds (no link followed, a bounded walk): a cache that grows is "
      "loading progress, as a progress line is (\\fBSTATUS=compiling kernels:\\fR \\fIcache\\fR "
      "\\fB+\\fR\\fIsize\\fR, the start timeout extended), so a silent first\\-use JIT build is "
      "not killed; an engine that neither prints nor grows a cache still is, at "
      "\\fBserver.ready_timeout\\fR.\n";
  page +=
      ".SH \"EXIT STATUS\"\n"
      "0 on success; 1 when a profile is missing or invalid, with one line on standard error "
      "naming the file, line and column; 70 on an internal error.\n";
  page +=
      ".SH EXAMPLES\n"
      ".nf\n"
      "gpulaunch list\n"
      "gpulaunch show k26\\-ar\n"
      "gpulaunch render k26\\-ar > /etc/systemd/system/k26\\-ar.service\n"
      "gpulaunch check \\-\\-all\n"
      ".fi\n";
  page +=
      ".SH \"SEE ALSO\"\n"
      "\\fBgpulaunch.toml\\fR(5), \\fBsystemd.service\\fR(5), \\fBsystemd.exec\\fR(5), "
      "\\fBsystemctl\\fR(1)\n";
  return page;
}

// What `check` and `up` hold the node's GPUs and driver to (rules/gpu_health), from the catalog's
// rows (catalog/node_health).
std::string gpu_health_section() {
  // The catalog's fixes name the GPU as {gpu}; the page names none.
  auto any_gpu = [](std::string_view fix) {
    std::string text(fix);
    for (size_t at = text.find("{gpu}"); at != std::string::npos; at = text.find("{gpu}", at))
      text.replace(at, 5, "N");
    return text;
  };
  std::string page =
      ".SH \"NODE CHECKS: GPU HEALTH AND DRIVER\"\n"
      "On this node (not under \\fB\\-\\-root\\fR or with \\fB\\-\\-facts\\fR alone), "
      "\\fBcheck\\fR and \\fBup\\fR read each GPU's health through NVML, the NVIDIA "
      "kernel module's Xid lines since boot from the kernel's journal, and, where a GPU reports "
      "an NVLink fabric, the state of \\fB" +
      literal(kFabricManagerUnit) +
      "\\fR over D\\-Bus. Only the GPUs the engine gets are judged.\n"
      ".TP\n\\fBdriver\\-library\\-mismatch\\fR (error)\n" +
      roff(fmt::format("NVML answers \"{}\": the driver was upgraded under the loaded module. "
                       "Reboot, or stop every GPU process and reload the nvidia modules.",
                       kNvmlVersionMismatchText)) +
      "\n.TP\n\\fBgpu\\-fabric\\-not\\-ready\\fR, \\fBfabric\\-manager\\-inactive\\fR "
      "(errors)\n" +
      roff(fmt::format("A GPU not registered with the NVLink fabric fails every CUDA start with "
                       "error {} \"{}\"; so does a multi-GPU start once the fabric must be set up "
                       "again without the Fabric Manager. Fix: systemctl enable --now "
                       "nvidia-fabricmanager, of the driver's exact version.",
                       kCudaErrorSystemNotReady, kCudaSystemNotReadyText)) +
      "\n";
  for (auto check : {HealthCheck::ecc_uncorrected_volatile, HealthCheck::row_remap_failure,
                     HealthCheck::row_remap_pending, HealthCheck::retired_pages_pending,
                     HealthCheck::persistence_off}) {
    const HealthThreshold& row = health_threshold(check);
    page += fmt::format(".TP\n\\fB{}\\fR ({})\n{}\n", literal(row.code),
                        row.blocks_start ? "error" : "warning",
                        roff(std::string(row.meaning) + ". Fix: " + any_gpu(row.fix)));
  }
  page +=
      ".TP\n\\fBgpu\\-xid\\-\\fR\\fIN\\fR\nXid \\fIN\\fR since boot on one of the "
      "engine's GPUs, or at an address no GPU answers at any more:\n.RS\n";
  for (const XidRow& row : xid_rows())
    page += fmt::format(".TP\n\\fB{}\\fR {} ({})\n{}\n", row.xid, roff(row.name),
                        row.blocks_start ? "error" : "warning",
                        roff(std::string(row.meaning) + ". Fix: " + any_gpu(row.fix)));
  page += ".RE\n";
  return page;
}

// What gpulaunch.toml(5) says about trust: whose profiles root reads, what service.extra may not
// say (from the one table, profile/unsafe_directives.hpp), and how secrets stay out of files.
std::string security_section() {
  std::string page =
      ".SH SECURITY\n"
      "A profile decides what root installs and runs. Run as root, \\fBgpulaunch\\fR reads "
      "only profiles that only root can change: a profile file, drop-in, \\fBextends\\fR parent "
      "or search-path directory that is owned by another user, or group- or world-writable, or "
      "lies below a directory that is (a sticky directory such as \\fI/tmp\\fR excepted), is "
      "refused with the path, its owner and its mode. Such a directory is refused, not skipped, "
      "so that root never installs a different profile than the one in front of the operator; "
      "run from another directory, or keep profiles in \\fI/etc/gpulaunch/profiles\\fR.\n"
      ".PP\n"
      "\\fBservice.extra\\fR and \\fBservice.unit_extra\\fR may not run a command with "
      "privileges (the \\fB+\\fR, \\fB!\\fR and \\fB!!\\fR prefixes on any "
      "\\fBExec*\\fR line, alone or after \\fB@\\fR, \\fB-\\fR or \\fB:\\fR), nor set "
      "any of these directives, each a prefix where it ends in \\fB*\\fR:\n.RS\n";
  std::string names;
  for (const auto& directive : unsafe_directives())
    names += (names.empty() ? "" : ", ") + std::string(directive.name) +
             (directive.prefix ? "*" : "") + "=";
  page += roff(names) + "\n.RE\n";
  page +=
      ".PP\n"
      "\\fBservice.allow_unsafe_extra = true\\fR lifts this. It makes the profile "
      "root-equivalent: whoever can change the profile can then run anything as root. Use it "
      "only in profiles only root can write, and only for a line you have read.\n"
      ".PP\n"
      "\\fB[secrets]\\fR maps a name to a file holding the secret, e.g. \\fBHF_TOKEN = "
      "\"/etc/gpulaunch/secrets/hf_token\"\\fR. The file must be a regular file owned by root "
      "with mode 0600 or 0400 where no other user can replace it; \\fBup\\fR and "
      "\\fBcheck\\fR refuse it otherwise. The unit says \\fBLoadCredential=NAME:FILE\\fR: "
      "systemd reads the file as root and gives the engine a copy in "
      "\\fI$CREDENTIALS_DIRECTORY/NAME\\fR, readable by the service's user only, and "
      "\\fBNAME_PATH\\fR points at it (huggingface_hub reads its token from "
      "\\fBHF_TOKEN_PATH\\fR). The value is never in the unit, the snapshot or a lock; a lock "
      "records the secret's name.\n";
  return page;
}

// What `check` holds the toolkit, FlashInfer and the GPUs to (rules/check, catalog/flashinfer_*).
std::string toolkit_section() {
  return ".SH \"TOOLKIT AND GPU RULES\"\n"
         "\\fBtoolkit.arch_list\\fR becomes \\fBFLASHINFER_CUDA_ARCH_LIST\\fR, which FlashInfer "
         "splits on single spaces: \\fB\"9.0a 10.0a 12.0f\\fR\". An entry with an \\fBa\\fR or "
         "\\fBf\\fR suffix is handed to nvcc as it is (\\fBcompute_120f\\fR): \\fBa\\fR exists "
         "from sm_90 on, \\fBf\\fR from sm_100 on and only in nvcc 12.9 or later. FlashInfer adds "
         "its own suffix to the others (12.x needs nvcc 12.9 there). A ';' or ',' separator, a "
         "doubled space or \\fB+PTX\\fR is refused with the value that works.\n"
         ".PP\n"
         "The toolkit judged is the one the unit's JIT finds: \\fBCUDA_HOME\\fR, "
         "\\fBCUDA_PATH\\fR, two directories above \\fBwhich nvcc\\fR (links not followed), "
         "\\fI/usr/local/cuda\\fR. A root is a toolkit only with \\fIbin/nvcc\\fR, "
         "\\fIlibcudart.so\\fR in \\fIlib64/\\fR or \\fIlib/\\fR and "
         "\\fIinclude/cuda_runtime.h\\fR: an nvcc wrapper in \\fI/usr/local/bin\\fR makes it "
         "\\fI/usr/local\\fR, which is an error whose fix pins the real toolkit in "
         "\\fBtoolkit.cuda_home\\fR; \\fBcheck\\fR never suggests a root that is not a toolkit. "
         "\\fBFLASHINFER_NVCC\\fR in \\fB[env]\\fR is the compiler judged for the targets; "
         "it and \\fBFLASHINFER_NVCC_LAUNCHER\\fR must be programs the unit finds (gpulaunch "
         "never runs the launcher).\n"
         ".PP\n"
         "\\fBflashinfer\\-cubin\\fR and \\fBflashinfer\\-jit\\-cache\\fR must carry "
         "\\fBflashinfer\\-python\\fR's version (the cache's before its \\fB+cuXYZ\\fR label), "
         "or importing FlashInfer fails; \\fBcheck\\fR gives the pip command, unless "
         "\\fBFLASHINFER_DISABLE_VERSION_CHECK\\fR is set.\n"
         ".PP\n"
         "A GPU in MIG mode runs CUDA only in its MIG instances, one per process, and NCCL has "
         "none: "
         "a \\fBMIG\\-\\fR UUID in \\fBgpus.devices\\fR must be the only device of a one-rank "
         "engine that runs on MIG (see \\fBENGINES\\fR), and \\fBcheck\\fR refuses a GPU in MIG "
         "mode given whole or to an engine that cannot use it.\n";
}

// The node preflight's OS side (rules/node_checks, catalog/node_requirements).
std::string node_os_section() {
  return ".SH \"NODE CHECKS: RDMA, SHARED MEMORY, OTHER PROFILES, MODEL FIT\"\n"
         "On a node with InfiniBand (\\fI/sys/class/infiniband\\fR has entries) the unit allows "
         "\\fBchar\\-infiniband_verbs\\fR and \\fI/dev/infiniband/rdma_cm\\fR under "
         "\\fBDevicePolicy=closed\\fR and sets \\fBLimitMEMLOCK=infinity\\fR; elsewhere it sets "
         "neither (\\fBgpulaunch render \\-\\-infiniband\\fR renders the former). \\fBcheck\\fR "
         "warns when no peer-memory module (\\fBnvidia_peermem\\fR, or the older "
         "\\fBnv_peer_mem\\fR) is in \\fI/proc/modules\\fR: GPUDirect RDMA is off (fix: "
         "\\fBmodprobe nvidia_peermem\\fR, and a line in "
         "\\fI/etc/modules\\-load.d/nvidia\\-peermem.conf\\fR); it reports a "
         "\\fBservice.extra\\fR that hides \\fI/dev/infiniband\\fR (NCCL falls back to sockets) "
         "or limits \\fBLimitMEMLOCK=\\fR, an error for a multi-node profile.\n"
         ".PP\n"
         "\\fI/dev/shm\\fR under 1 GiB (statvfs) is an error for more than one GPU on the node: "
         "NCCL's shared-memory transport fails to initialise (NCCL's own advice for containers "
         "is \\fB\\-\\-shm\\-size=1g\\fR; Docker's default is 64 MiB).\n"
         ".PP\n"
         "Another profile installed on the node (its snapshot in "
         "\\fI/var/lib/gpulaunch/snapshots\\fR) on any of the same GPUs is a warning.\n"
         ".PP\n"
         "A local model must fit: its weights (\\fImodel.safetensors.index.json\\fR's "
         "\\fBmetadata.total_size\\fR, else the sizes of its \\fI*.safetensors\\fR, \\fI*.bin\\fR "
         "and \\fI*.gguf\\fR files, read without following links) plus the KV cache of one "
         "request at the model's context (\\fIconfig.json\\fR: layers, KV heads and head size, "
         "or MLA's latent; 2 bytes an element; the context flag in \\fBengine.args\\fR wins) "
         "must fit in the smallest GPU's memory x the engine's memory share x tp x pp. A hub id "
         "is not judged (a note, not an error).\n";
}

// One entry per row of the engine table: how the kind starts, its defaults, its knobs' flags.
std::string engines_section() {
  std::string page = ".SH ENGINES\n\\fBengine.kind\\fR is one of these.\n";
  for (const EngineRow& row : engine_rows()) {
    page += fmt::format(".TP\n\\fB{}\\fR \\(em {}\n", literal(row.name), roff(row.display));
    const std::string program = "\\fB" + literal(row.program) + "\\fR";
    switch (row.launch) {
      case Launch::python_module:
        page += "Runs \\fIPYTHON\\fR \\fB\\-m\\fR " + program +
                " from \\fBengine.venv\\fR or \\fBengine.python\\fR.";
        if (!row.serve_script.program.empty())
          page += fmt::format(
              " When the version installed in \\fBengine.venv\\fR is {} or later (read from its "
              "dist-info by \\fBup\\fR and \\fBlock\\fR, or given to \\fBrender "
              "\\-\\-engine\\-version\\fR), runs the venv's \\fB{} {}\\fR instead, the "
              "entry point it recommends; an unknown version keeps \\fB\\-m\\fR.",
              literal(row.serve_script.since), literal(row.serve_script.program),
              literal(row.serve_script.subcommand));
        break;
      case Launch::venv_program:
        page += "Runs " + program + " from \\fBengine.venv\\fR, or \\fBengine.executable\\fR.";
        break;
      case Launch::executable:
        page += "Runs \\fBengine.executable\\fR (" + program + "); no Python environment.";
        break;
      case Launch::argv:
        page += "Runs \\fBengine.argv\\fR as it is.";
        break;
    }
    if (row.model == ModelSource::local_file) page += " \\fBmodel.path\\fR is a local file.";
    page += fmt::format(" Port {} unless \\fBserver.port\\fR says otherwise; {}.", row.default_port,
                        roff(row.readiness));
    std::vector<std::string> knobs;
    for (auto [key, knob] : {std::pair{"engine.mem_fraction", &row.mem_fraction},
                             std::pair{"engine.max_requests", &row.max_requests},
                             std::pair{"engine.cuda_graph_max_bs", &row.cuda_graph_max_bs}})
      if (!knob->flag.empty())
        knobs.push_back(fmt::format("\\fB{}\\fR is \\fB{}\\fR", literal(key), literal(knob->flag)));
    if (!row.context.flag.empty())
      knobs.push_back(fmt::format("the context is \\fB{}\\fR in \\fBengine.args\\fR",
                                  literal(row.context.flag)));
    for (size_t i = 0; i < knobs.size(); ++i)
      page += (i == 0 ? " " : i + 1 == knobs.size() ? " and " : ", ") + knobs[i];
    if (!knobs.empty())
      page += row.steps_down ? "; after an out-of-memory stop the supervisor lowers them, a knob "
                               "the profile leaves unset from what the engine itself picks on the "
                               "unit's GPUs."
                             : "; the supervisor leaves them as they are.";
    if (!row.cuda_graph_max_bs.short_flag.empty())
      page += fmt::format(
          " \\fB{}\\fR, the deprecated spelling of \\fB{}\\fR, is lowered "
          "as written where \\fBengine.args\\fR has it.",
          literal(row.cuda_graph_max_bs.short_flag), literal(row.cuda_graph_max_bs.flag));
    if (!row.speculative_methods.empty()) {
      std::string methods;
      for (const auto& method : row.speculative_methods)
        methods +=
            (methods.empty() ? "" : ", ") + std::string("\\fB") + literal(method.name) + "\\fR";
      page += " \\fBspeculative.algorithm\\fR is one of " + methods + " (in any case).";
    }
    std::vector<std::string_view> supports;
    if (row.multi_node) supports.push_back("several nodes");
    if (row.dp_attention) supports.push_back("parallelism.dp_attention");
    if (row.speculative) supports.push_back("[speculative]");
    for (size_t i = 0; i < supports.size(); ++i)
      page += std::string(i == 0                     ? " Supports "
                          : i + 1 == supports.size() ? " and "
                                                     : ", ") +
              "\\fB" + literal(supports[i]) + "\\fR" + (i + 1 == supports.size() ? "." : "");
    if (!row.splits_ranks) page += " " + sentence(row.no_ranks_hint);
    page += row.mig == MigSupport::one_instance
                ? " Runs on one MIG instance (a \\fBMIG\\-\\fR UUID alone in \\fBgpus.devices\\fR, "
                  "one rank)."
                : " Cannot run on a MIG instance: " + sentence(row.mig_source);
    if (row.health_answer.count() > 0)
      page += fmt::format(
          " Its health endpoint may take up to {} s to answer on a busy, healthy server{}.",
          row.health_answer.count(),
          row.health_answer_variable.empty()
              ? std::string()
              : fmt::format(" (\\fB{}\\fR in \\fB[env]\\fR changes it)",
                            literal(row.health_answer_variable)));
    if (const MultiNodeFlags* flags = row.multi_node_flags; flags && !flags->headless.empty()) {
      auto flag = [](std::string_view name) { return "\\fB" + literal(name) + "\\fR"; };
      page += fmt::format(
          " Over several nodes rank 0 serves and ranks 1 and up run {} (no HTTP server: their "
          "unit is ready, and its watchdog fed, while the engine holds a TCP connection to rank "
          "0). The tensor and pipeline ranks span the nodes with {}, {}, {} and {} from "
          "\\fBparallelism.dist_init_addr\\fR; with \\fBparallelism.dp\\fR above 1 each node "
          "runs whole replicas instead (\\fBdp\\fR a multiple of the node count) with {}, {} "
          "(ranks 1 and up), {} and {}.",
          flag(flags->headless), flag(flags->nnodes), flag(flags->node_rank),
          flag(flags->master_addr), flag(flags->master_port), flag(flags->dp_size_local),
          flag(flags->dp_start_rank), flag(flags->dp_address), flag(flags->dp_rpc_port));
    }
    page += "\n";
  }
  page +=
      ".PP\n"
      "\\fB[speculative]\\fR is rendered in each engine's own terms. A method the chosen engine "
      "does not have is refused, with its name for the same method where it has one (SGLang's "
      "NEXTN is vLLM's mtp, STANDALONE its draft_model). SGLang gets "
      "\\fB\\-\\-speculative\\-num\\-steps\\fR, "
      "\\fB\\-\\-speculative\\-eagle\\-topk\\fR and "
      "\\fB\\-\\-speculative\\-num\\-draft\\-tokens\\fR as written; with "
      "\\fBeagle_topk\\fR 1 it verifies \\fBnum_steps\\fR + 1 tokens, and another "
      "\\fBnum_draft_tokens\\fR is refused. vLLM gets "
      "\\fB\\-\\-speculative\\-config\\fR whose \\fBnum_speculative_tokens\\fR counts "
      "the proposed tokens only: \\fBnum_steps\\fR, else \\fBnum_draft_tokens\\fR \\- 1; it "
      "drafts one chain, so \\fBeagle_topk\\fR above 1 is refused.\n"
      ".PP\n"
      "The step-down's baselines: vLLM's \\fBgpu_memory_utilization\\fR 0.92 and "
      "\\fBmax_num_seqs\\fR 1024 on GPUs of 70 GiB or more other than A100, 256 elsewhere; "
      "SGLang's \\fBmem_fraction_static\\fR as SGLang computes it from the GPU's memory, tp and "
      "pp (0.907 on an H200 at tp 1, 0.95 where the memory is unknown) and its decode CUDA "
      "graphs' largest batch. The journal line of each step names the baseline and where it came "
      "from.\n";
  return page;
}

// Start-up progress, the health probe and the watchdog, as `run` does them.
std::string startup_section() {
  return fmt::format(
      ".SH \"START-UP AND HEALTH\"\n"
      "The unit's main process, \\fBgpulaunch run\\fR, passes the engine's output to the "
      "journal and reads its start-up lines: the loading phase and the weight-loading "
      "percentage (SGLang's \\fBMulti-thread loading shards: N% Completed\\fR, the older "
      "\\fBcheckpoint shards\\fR lines, vLLM's) go to \\fBSTATUS=\\fR, and progress near "
      "\\fBserver.ready_timeout\\fR pushes the deadline back. Progress bars redraw themselves "
      "with carriage returns on one line; each update is read as it is written and becomes a "
      "journal line of its own, so the journal keeps the pace of a long load and never holds one "
      "unbounded line (a line longer than {} KiB is passed on in pieces).\n"
      ".PP\n"
      "\\fBREADY=1\\fR follows the first 200 from the health endpoint. One probe may take the "
      "engine's own health answer time and {} s more (at least {} s); a slower answer counts as "
      "none. The unit's \\fBWatchdogSec=\\fR is \\fBserver.watchdog\\fR, raised to {} such "
      "probe timeouts where it is shorter, and a serving engine is probed every quarter of it: "
      "one probe may time out and the next still feeds the watchdog in time, so a busy "
      "engine whose health check is slow is not restarted, while one that stops answering is.\n",
      kMaxOutputLine / 1024, kHealthAnswerMargin.count(), kMinHealthTimeout.count(),
      kWatchdogHealthTimeouts);
}

// server.liveness, from the engines' liveness facts (catalog/engines) and the plan's bounds.
std::string liveness_section() {
  std::string page = fmt::format(
      ".SH LIVENESS\n"
      "An engine can keep answering its health endpoint while no request finishes (a wedged "
      "kernel, a stuck scheduler). \\fBserver.liveness\\fR says how \\fBgpulaunch run\\fR tells "
      "such an engine from a busy one once it serves: \\fBgenerate\\fR sends a one-token "
      "generation through the engine's own API every \\fBserver.liveness_interval\\fR "
      "(default {} s), but none while the engine's token counter moved since the last look; "
      "\\fBmetrics\\fR reads the engine's Prometheus metrics every interval and sends no "
      "generation; \\fBhealth\\fR feeds systemd's watchdog from health 200 alone (as before); "
      "\\fBoff\\fR watches nothing once the engine serves (no \\fBWatchdogSec=\\fR). A stall is a "
      "probe with no 2xx answer for \\fBserver.liveness_timeout\\fR (default {} s) while no "
      "token moved, or requests in flight while the token counter stood still that long (where "
      "the engine has metrics), even with the probe still queued; requests slower than the "
      "timeout while tokens flow are none. While a probe fails, health 200 no longer feeds the "
      "watchdog, which is raised to {}.{}x (timeout + {} s) where shorter.\n"
      ".PP\n"
      "On a stall \\fBrun\\fR prints \\fBstalled: no forward progress for N s (signal=... "
      "in_flight=... tokens=...)\\fR, sends SIGABRT to every process of the engine (the unit "
      "sets \\fB{}=1\\fR, so each Python process writes every thread's stack to the journal, "
      "and \\fBLimitCORE=0\\fR, so none writes a core of its whole address space), kills them "
      "all {} s later (sooner once all have exited) and exits {}; \\fBrecord-exit\\fR classifies "
      "the stop as \\fBstalled\\fR "
      "and the restart policy applies. \\fBserver.ready\\fR = \\fBgenerate\\fR holds "
      "\\fBREADY=1\\fR back until the probe generated a token after health 200 "
      "(\\fBSTATUS=\\fR {}). Where the probe's path needs an API key, gpulaunch sends one only "
      "from \\fB[secrets]\\fR, as its only source: \\fBrun\\fR reads the credential from "
      "\\fB$CREDENTIALS_DIRECTORY\\fR (and sets the engine's variable to it), so the key is never "
      "in the unit's text; with a key in any other form (below, per engine) no probe is sent, "
      "nor a metrics read where the key guards the metrics, \\fBcheck\\fR says which signal "
      "remains, and \\fBserver.ready\\fR = \\fBgenerate\\fR is refused. Where the metrics watch "
      "the engine, the timeout is at least {} times the engine's metrics refresh.\n"
      ".PP\n"
      "At the defaults that is {} looks an hour: with metrics, one read of the metrics page "
      "each and a one-token generation only when no token moved (at most 2 requests a look); "
      "without, one generation each (SGLang's ignores a busy server).\n",
      kDefaultLivenessInterval.count(), kDefaultLivenessTimeout.count(),
      kWatchdogLivenessTenths / 10, kWatchdogLivenessTenths % 10, kStallDumpGrace.count(),
      literal(kPythonFaultHandlerVariable), kStallDumpGrace.count(), kExitStalled,
      kWaitingForGenerationStatus, kLivenessRefreshTimes, 3600 / kDefaultLivenessInterval.count());
  for (const EngineRow& row : engine_rows()) {
    const LivenessFacts& facts = row.liveness;
    page += fmt::format(".TP\n\\fB{}\\fR\nDefault \\fB{}\\fR.", literal(row.name),
                        liveness_mode_name(facts.default_mode));
    if (!facts.probe.path.empty())
      page += fmt::format(
          " Probe: {} \\fB{}\\fR{} ({}).", facts.probe.method, literal(facts.probe.path),
          facts.probe.one_token_field.empty()
              ? std::string(", the engine's own one-token generation")
              : fmt::format(" with \\fB{}\\fR 1", literal(facts.probe.one_token_field)),
          literal(facts.probe.source));
    else
      page += " No generation API gpulaunch knows: \\fBhealth\\fR or \\fBoff\\fR only.";
    if (!facts.metrics.path.empty())
      page += fmt::format(" Metrics: \\fB{}\\fR, \\fB{}\\fR and \\fB{}\\fR{} ({}).",
                          literal(facts.metrics.path), literal(facts.metrics.in_flight),
                          literal(facts.metrics.tokens),
                          facts.metrics.enable_flag.empty()
                              ? std::string(", always on")
                              : fmt::format(", with \\fB{}\\fR (\\fBmetrics\\fR adds it)",
                                            literal(facts.metrics.enable_flag)),
                          literal(facts.metrics.source));
    else
      page += " No Prometheus metrics: not \\fBmetrics\\fR.";
    if (facts.metrics.busy_needs_metrics)
      page += fmt::format(
          " \\fBgenerate\\fR adds \\fB{}\\fR too: the probe waits behind a "
          "saturated engine's queue, the token counter does not.",
          literal(facts.metrics.enable_flag));
    if (facts.metrics.refresh.count() > 0)
      page +=
          fmt::format(" Its metrics refresh every {} s when idle.", facts.metrics.refresh.count());
    if (facts.health_generates) page += " Its health endpoint itself generates a token.";
    if (facts.ranks_stub_health)
      page += fmt::format(
          " A rank above 0 answers health with a stub: its liveness is \\fBhealth\\fR alone, "
          "rank 0's watches the group ({}).",
          literal(facts.ranks_source));
    std::string keys;
    const ApiKeyFacts& key = facts.api_key;
    for (const auto& ways : {key.flags, key.file_flags})
      for (std::string_view flag : ways) keys += (keys.empty() ? "" : ", ") + literal(flag);
    for (std::string_view variable : key.variables)
      keys += (keys.empty() ? "" : ", ") + literal(variable);
    if (!key.config_flag.empty())
      keys += fmt::format("{}{} (a file gpulaunch does not read)", keys.empty() ? "" : ", ",
                          literal(key.config_flag));
    if (!keys.empty())
      page +=
          fmt::format(" API key: {}{} ({}).", keys,
                      key.guards_metrics ? "; it guards the metrics too" : "", literal(key.source));
    page += "\n";
  }
  return page;
}

// server.drain_timeout: what a stop does, from the engines' drain facts (catalog/engines) and the
// plan's bounds.
std::string drain_section() {
  std::string page = fmt::format(
      ".SH \"STOPPING: THE DRAIN\"\n"
      "\\fBdown\\fR, \\fBrestart\\fR, \\fBup\\fR of a changed profile, a group restart and "
      "systemd's own restarts stop the unit the same way: systemd sends SIGTERM to "
      "\\fBgpulaunch run\\fR alone (\\fBKillSignal=SIGTERM\\fR, \\fBKillMode=mixed\\fR), "
      "which passes it to the engine and lets it finish the requests in flight for "
      "\\fBserver.drain_timeout\\fR (default {} s); {} s after that it kills the engine's "
      "process group with SIGKILL. \\fBTimeoutStopSec=\\fR is the drain time + {} s, so "
      "systemd's own SIGKILL (\\fBSendSIGKILL=yes\\fR) comes only after \\fBrun\\fR's, and "
      "\\fBrecord\\-exit\\fR still runs. A stall or an expired watchdog is no stop: the "
      "engine gets SIGABRT or SIGKILL at once.\n",
      kDefaultDrainTimeout.count(), kStopKillGrace.count(),
      (kStopKillGrace + kStopTimeoutMargin).count());
  for (const EngineRow& row : engine_rows()) {
    const DrainFacts& drain = row.drain;
    page += fmt::format(".TP\n\\fB{}\\fR\n{}.", literal(row.name), literal(drain.behaviour));
    if (!drain.flag.empty())
      page += fmt::format(
          " \\fB{}\\fR from release {} on, where \\fBup\\fR read the installed "
          "version, unless \\fBengine.args\\fR sets it.",
          literal(drain.flag), literal(drain.since));
    if (!drain.source.empty()) page += fmt::format(" ({})", literal(drain.source));
    page += "\n";
  }
  return page;
}

// The caches the unit pins, from the one table (catalog/jit_caches).
std::string caches_section() {
  std::string page =
      ".SH CACHES\n"
      "The unit pins every cache below to a directory under \\fBcaches.root\\fR "
      "(\\fI/var/cache/gpulaunch/NAME\\fR by default; \\fBcaches.paths.NAME\\fR moves one). "
      "Before each start, root clears the caches whose entries the node's changed facts made "
      "stale (toolkit, driver, GPU architectures, torch, FlashInfer, Triton, engine), and lock "
      "files a killed build or download left that no process holds. A cache a crash's traceback "
      "ran through is moved aside, not cleared (see \\fBSTOPS\\fR).\n";
  for (const JitCache& cache : jit_caches()) {
    std::string variables;
    for (const auto& variable : cache.variables)
      variables +=
          (variables.empty() ? "" : ", ") + std::string("\\fB") + literal(variable.name) + "\\fR";
    std::string stale = cache.keys_itself        ? "never cleared for a changed node"
                        : cache.stale_on.empty() ? "cleared when any of these facts changes"
                                                 : "cleared when one of these changes: ";
    for (size_t i = 0; !cache.keys_itself && i < cache.stale_on.size(); ++i)
      stale += (i == 0 ? "" : ", ") + std::string(cache.stale_on[i]);
    page += fmt::format(".TP\n\\fB{}\\fR \\(em {}\n{}; {}.\n", literal(cache.name), variables,
                        roff(cache.note), roff(stale));
  }
  page += fmt::format(
      ".PP\n"
      "On an offline node (\\fBHF_HUB_OFFLINE\\fR or \\fBTRANSFORMERS_OFFLINE\\fR true in "
      "\\fB[env]\\fR) the unit also sets \\fB{0}=1\\fR: a FlashInfer kernel that ships as a "
      "downloaded cubin then fails at once, naming the file, rather than after minutes of "
      "retries. FlashInfer treats any non-empty value as set, \\fB0\\fR included. "
      "The unit never sets \\fBFLASHINFER_CUBIN_DIR\\fR, which would hide the cubins of an "
      "installed \\fBflashinfer\\-cubin\\fR package; without one, FlashInfer downloads into "
      "\\fB.cache/flashinfer/cubins\\fR of the \\fBflashinfer\\fR cache. \\fB[env]\\fR may set "
      "it. \\fBgpulaunch check\\fR warns when downloads are off, no package is installed and "
      "that directory is empty, and when \\fB[env]\\fR hides an installed package.\n",
      literal(kFlashinferNoDownload));
  return page;
}

std::string format_page(std::string_view date) {
  std::string page = header("GPULAUNCH.TOML", 5, date);
  page += ".SH NAME\ngpulaunch.toml \\- gpulaunch profile format\n";
  page +=
      ".SH SYNOPSIS\n"
      "\\fI/etc/gpulaunch/profiles/\\fRNAME\\fI.toml\\fR\n.br\n"
      "\\fI/etc/gpulaunch/profiles/\\fRNAME\\fI.toml.d/*.toml\\fR\n.br\n"
      "\\fI/usr/share/gpulaunch/profiles/\\fRNAME\\fI.toml\\fR\n";
  page +=
      ".SH DESCRIPTION\n"
      "A profile is a TOML file describing one inference service: the engine and model, how its "
      "ranks are laid out, the CUDA toolkit its JIT compilers see, its GPUs, caches, HTTP "
      "endpoint, restart policy and systemd settings. \\fBgpulaunch\\fR(1) looks profiles up by "
      "name on its search path (see \\fBFILES\\fR in \\fBgpulaunch\\fR(1)).\n"
      ".PP\n"
      "A profile may name another in \\fBextends\\fR; it starts from that profile's keys and "
      "overrides them. Drop-ins in \\fINAME.toml.d/*.toml\\fR, in any search directory, "
      "are merged on top in file name order, as systemd does for units; a drop-in may not use "
      "\\fBextends\\fR.\n"
      ".PP\n"
      "Unknown keys and values of the wrong type are errors naming the file, line and column.\n";
  page += ".SH KEYS\n";
  bool top_level_open = false;
  for (const KeySpec& key : profile_schema()) {
    const bool is_table = key.type == KeyType::table || key.type == KeyType::free_table;
    const bool top_level = key.path.find('.') == std::string_view::npos;
    if (is_table && top_level) {
      page += fmt::format(".SS \"[{}]\"\n{}\n", literal(key.path),
                          key.type == KeyType::free_table ? roff(key.help) + "; its keys are free."
                                                          : sentence(key.help));
      continue;
    }
    if (top_level && !top_level_open) {
      page += ".SS \"Top level\"\n";
      top_level_open = true;
    }
    const std::string_view name = top_level ? key.path : key.path.substr(key.path.rfind('.') + 1);
    std::string type(key_type_name(key.type));
    if (key.type == KeyType::free_table) type += " of free keys";
    if (key.max_length > 0) type += fmt::format(", at most {} bytes", key.max_length);
    page += fmt::format(".TP\n\\fB{}\\fR \\(em {}\n{}\n", literal(name), roff(type),
                        sentence(key.help));
  }
  page += toolkit_section();
  page += node_os_section();
  page += engines_section();
  page += startup_section();
  page += liveness_section();
  page += drain_section();
  page += caches_section();
  page += security_section();
  page +=
      ".SH EXAMPLE\n"
      ".nf\n"
      "description = \"Kimi K2.6 autoregressive, TP8, SGLang\"\n\n"
      "[engine]\nkind = \"sglang\"\nvenv = \"/opt/gpulaunch/venvs/sglang\"\n\n"
      "[model]\npath = \"/models/moonshotai/Kimi\\-K2.6\"\n\n"
      "[parallelism]\ntp = 8\n\n"
      "[toolkit]\ncuda_home = \"/usr/local/cuda\\-13.0\"\n\n"
      "[server]\nport = 30000\nready_timeout = \"20min\"\n"
      ".fi\n"
      ".PP\n"
      "More in \\fI/usr/share/gpulaunch/profiles/\\fR.\n";
  page += ".SH \"SEE ALSO\"\n\\fBgpulaunch\\fR(1), \\fBsystemd.service\\fR(5)\n";
  return page;
}

}  // namespace

void add_man_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("internal-man", "Print a manual page as roff (build step)");
  command->group("");  // hidden
  static std::string section;
  static std::string date = "1970-01-01";
  command->add_option("section", section, "1: gpulaunch(1), 5: gpulaunch.toml(5)")
      ->required()
      ->check(CLI::IsMember({"1", "5"}));
  command->add_option("--date", date, "Date in the page footer (reproducible builds pass one)");
  command->callback([&app, &context] {
    fmt::print("{}", section == "1" ? command_page(app, date) : format_page(date));
    context.exit_code = 0;
  });
}

}  // namespace gl
