#include "engines/engine_argv.hpp"

namespace gl {

std::string venv_program(const Profile& profile, const std::string& program) {
  if (profile.engine.venv) return *profile.engine.venv + "/bin/" + program;
  if (program == "python" && profile.engine.python) return *profile.engine.python;
  return program;
}

std::vector<std::string> engine_argv(const Profile& profile, const LaunchOptions& options) {
  std::vector<std::string> argv;
  switch (profile.engine.kind) {
    case EngineKind::sglang:
      argv = sglang_argv(profile, options);
      break;
    case EngineKind::vllm:
      argv = vllm_argv(profile, options);
      break;
    case EngineKind::trtllm:
      argv = trtllm_argv(profile, options);
      break;
    case EngineKind::command:
      argv = profile.engine.argv;
      break;
  }
  // The profile's own arguments come last so they can override anything above.
  argv.insert(argv.end(), profile.engine.args.begin(), profile.engine.args.end());
  return argv;
}

}  // namespace gl
