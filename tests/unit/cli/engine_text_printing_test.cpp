// SPDX-License-Identifier: Apache-2.0
// Issue 45: every engine-supplied text reaches root's terminal escaped (util/terminal_text). The
// logger escapes every line it writes (log/logger); what the commands print themselves with
// fmt::print is read here from the sources: each argument that names an engine-supplied value
// must pass it through terminal_text (or only ask whether it is empty). A new print of such a
// value without the escape fails this test, naming the file and line.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "supervise/upgrade_gate.hpp"

namespace gl {
namespace {

namespace fs = std::filesystem;

// The names engine-supplied values go by where the commands print them, and where each comes
// from. A value renamed or added must join this list.
const std::vector<std::string> kEngineValues{
    "text",         // a gate answer (GateAnswer::text), a rank's line, up's progress line
    "answers",      // GateMeasurement::answers
    "message",      // a journal entry's MESSAGE= (JournalEntry::message)
    "identifier",   // its SYSLOG_IDENTIFIER=, which the engine sets
    "status_text",  // the unit's STATUS=, made of the engine's start-up lines by `run`
    "phase",        // the same, as `up` watches it
    "evidence",     // an event's evidence: the engine's lines (supervise/record_stop)
    "last_event",   // the same, as status shows it
    "failure",      // the last failure, from the same history
    "line",         // a journal or rank line
};

// Where such a name is gpulaunch's own value, or the text is not for a terminal: each with why.
struct OwnValue {
  std::string file;        // relative to the checkout
  std::string expression;  // ends with the name, as the argument spells it
  std::string why;
};
const std::vector<OwnValue> kOwnValues{
    {"src/cli/status_command.cpp", "span.phase", "a StartPhase enumerator (start_phase_name)"},
    {"src/cli/upgrade_gate.cpp", "line", "measurement_lines escapes the answers itself"},
    {"src/cli/warm_command.cpp", "line", "progress_line: counts and sizes only"},
    {"src/cli/run_command.cpp", "line",
     "the engine's output, forwarded to its journal stream (stdout under systemd), which keeps "
     "the raw text; logs, status and events escape it when they show it"},
    {"src/cli/prepare_caches_command.cpp", "line",
     "prepare-caches' own lines to the journal (stdout under systemd)"},
    {"src/cli/logs_command.cpp", "message",
     "logs --json: JSON lines, the message's control bytes escaped by nlohmann's dump"},
    {"src/cli/logs_command.cpp", "identifier", "logs --json: escaped by the JSON dump, as above"},
    {"src/cli/up_output.cpp", "text",
     "progress_text: the elapsed time, the deadline and the phase through terminal_text"},
    {"src/cli/lock_command.cpp", "text",
     "the lockfile itself (JSON, its control bytes escaped by the writer), which a redirect "
     "writes to a file"},
};

// Where gpulaunch prints (ARCHITECTURE.md: only cli/ and run/ print, through log/).
const std::vector<std::string> kPrintingFolders{"src/cli", "src/run", "src/group"};

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The text with every comment and string or character literal blanked (newlines kept), so a name
// inside a format string or a comment is not taken for a value.
std::string without_literals(const std::string& text) {
  std::string out = text;
  const auto blank = [&](size_t from, size_t to) {
    for (size_t i = from; i < to && i < out.size(); ++i)
      if (out[i] != '\n') out[i] = ' ';
  };
  for (size_t at = 0; at < out.size(); ++at) {
    if (out.compare(at, 2, "//") == 0) {
      const size_t end = std::min(out.find('\n', at), out.size());
      blank(at, end);
      at = end;
      continue;
    }
    if (out[at] != '"' && out[at] != '\'') continue;
    const char quote = out[at];
    size_t end = at + 1;
    while (end < out.size() && out[end] != quote && out[end] != '\n')
      end += out[end] == '\\' ? 2 : 1;
    blank(at + 1, end);
    at = end;
  }
  return out;
}

// The arguments of the call whose '(' is at `open`, split at top-level commas.
std::vector<std::pair<size_t, std::string>> arguments(const std::string& code, size_t open) {
  std::vector<std::pair<size_t, std::string>> args;
  int depth = 0;
  size_t start = open + 1;
  for (size_t at = open; at < code.size(); ++at) {
    const char c = code[at];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') {
      if (--depth == 0) {
        args.emplace_back(start, code.substr(start, at - start));
        break;
      }
    }
    if (c == ',' && depth == 1) {
      args.emplace_back(start, code.substr(start, at - start));
      start = at + 1;
    }
  }
  return args;
}

// Whether the name at `at` in `arg` is inside terminal_text(...), or only asked about.
bool escaped_or_asked(const std::string& arg, size_t at, size_t length) {
  const std::string rest = arg.substr(at + length);
  if (rest.starts_with(".empty()") || rest.starts_with(".size()")) return true;
  for (const std::string escape : {"terminal_text(", "terminal_lines("})
    for (size_t call = arg.find(escape); call != std::string::npos && call < at;
         call = arg.find(escape, call + 1)) {
      int depth = 0;
      size_t end = call + escape.size() - 1;
      for (; end < arg.size(); ++end) {
        if (arg[end] == '(') ++depth;
        if (arg[end] == ')' && --depth == 0) break;
      }
      if (at < end) return true;
    }
  return false;
}

struct Unescaped {
  std::string where;  // file:line
  std::string value;
};

std::vector<Unescaped> unescaped_prints(const fs::path& file, const std::string& shown) {
  const std::string code = without_literals(slurp(file));
  std::vector<Unescaped> found;
  static const std::regex kPrint(R"(\bfmt::print\s*\()");
  for (std::sregex_iterator it(code.begin(), code.end(), kPrint), end; it != end; ++it) {
    const size_t open = it->position() + it->length() - 1;
    for (const auto& [offset, arg] : arguments(code, open))
      for (const auto& name : kEngineValues) {
        const std::regex word("\\b" + name + "\\b");
        for (std::sregex_iterator m(arg.begin(), arg.end(), word), none; m != none; ++m) {
          if (escaped_or_asked(arg, m->position(), name.size())) continue;
          const size_t at = m->position();
          if (std::ranges::any_of(kOwnValues, [&](const OwnValue& own) {
                const size_t before = own.expression.size() - name.size();
                return own.file == shown && own.expression.ends_with(name) && at >= before &&
                       arg.compare(at - before, own.expression.size(), own.expression) == 0;
              }))
            continue;
          const size_t line =
              1 + std::count(code.begin(), code.begin() + offset + m->position(), '\n');
          found.push_back({shown + ":" + std::to_string(line), name});
        }
      }
  }
  return found;
}

TEST(EngineTextPrinting, EveryPrintOfAnEngineSuppliedValueEscapesIt) {
  const fs::path source(GL_SOURCE_DIR);
  size_t files = 0;
  std::vector<std::string> problems;
  for (const auto& folder : kPrintingFolders)
    for (const auto& entry : fs::directory_iterator(source / folder)) {
      if (entry.path().extension() != ".cpp") continue;
      ++files;
      const std::string shown = fs::relative(entry.path(), source).string();
      for (const auto& [where, value] : unescaped_prints(entry.path(), shown))
        problems.push_back(where + ": '" + value + "' printed without terminal_text");
    }
  EXPECT_GT(files, 20u);
  EXPECT_TRUE(problems.empty()) << [&] {
    std::string all;
    for (const auto& problem : problems) all += problem + "\n";
    return all;
  }();
}

// The scan itself: it finds a raw print, and lets an escaped one and an emptiness test pass.
TEST(EngineTextPrinting, TheScanFindsARawPrintAndPassesAnEscapedOne) {
  const fs::path file = fs::temp_directory_path() / "gl-engine-text-scan.cpp";
  std::ofstream(file)
      << "void f() {\n"
         "  fmt::print(\"a {}\\n\", terminal_text(entry.message));\n"
         "  fmt::print(\"phase: {}\\n\", phase.empty() ? \"-\" : terminal_text(phase));\n"
         "  fmt::print(\"text {}\\n\",\n"
         "             answer.text);\n"
         "}\n";
  const auto found = unescaped_prints(file, "x.cpp");
  fs::remove(file);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].where, "x.cpp:5");
  EXPECT_EQ(found[0].value, "text");
}

// What `gate record` and `gate check` print of an answer that holds OSC 52 (set the clipboard),
// OSC 0 (the window's title) and CSI 2J (clear the screen): visible escapes, never the bytes.
TEST(EngineTextPrinting, AGateAnswerWithOsc52IsShownEscaped) {
  GateMeasurement measured;
  measured.answers.push_back(
      {"Paris is", "\x1b]52;c;cm0gLXJmIC8K\x07 the capital\x1b]0;owned\x07\x1b[2J", 7});
  measured.tokens_per_second = 10;
  const auto lines = measurement_lines(measured);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "prompt 1 'Paris is': 7 token(s): \"\\x1b]52;c;cm0gLXJmIC8K\\x07 the "
            "capital\\x1b]0;owned\\x07\\x1b[2J\"");
  for (const auto& line : lines) EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
}

}  // namespace
}  // namespace gl
