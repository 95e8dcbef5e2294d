// SPDX-License-Identifier: Apache-2.0
#include "catalog/engines.hpp"

#include <array>

namespace gl {
namespace {

using Pct = ProgressMarker::Percent;

// SGLang: python/sglang/srt/server_args.py (flags), model_executor/model_runner.py and
// cuda_graph_runner.py (the lines below), checked against sgl-project/sglang 469c63e.
constexpr std::array kSglangProgress{
    ProgressMarker{"Load weight begin", Phase::loading_weights, Pct::in_line},
    ProgressMarker{"Load weight end", Phase::loading_weights, Pct::complete},
    ProgressMarker{"checkpoint shards", Phase::loading_weights, Pct::in_line},
    ProgressMarker{"Capture cuda graph begin", Phase::capturing_graphs},
    ProgressMarker{"fired up and ready to roll", Phase::waiting_for_health},
    // uvicorn, which SGLang and vLLM both serve through.
    ProgressMarker{"Application startup complete", Phase::waiting_for_health},
};
// field-facts §7; first match wins, so the specific advice comes before torch's generic error.
constexpr std::array kSglangOom{
    OomSignature{"alloc_req_slots runs out of memory", MemoryKnob::max_requests},
    OomSignature{"Capture cuda graph failed", MemoryKnob::cuda_graph_max_bs},
    // Weights loaded, but the static share leaves nothing for the KV cache: SGLang and vLLM
    // both advise a larger share; a smaller one would fail the same way sooner.
    OomSignature{"Not enough memory. Please try to increase --mem-fraction-static",
                 MemoryKnob::kv_cache_room},
};

// vLLM: vllm/engine/arg_utils.py (flags, gpu_memory_utilization 0.9), model_executor and
// worker/gpu_model_runner.py (the lines below).
constexpr std::array kVllmProgress{
    ProgressMarker{"Loading weights", Phase::loading_weights, Pct::in_line},
    ProgressMarker{"checkpoint shards", Phase::loading_weights, Pct::in_line},
    ProgressMarker{"Starting to load model", Phase::loading_weights, Pct::in_line},
    ProgressMarker{"Capturing CUDA graph", Phase::capturing_graphs},
    ProgressMarker{"Capturing CUDA graphs", Phase::capturing_graphs},
    ProgressMarker{"Compiling a graph", Phase::compiling},
    ProgressMarker{"torch.compile", Phase::compiling},
    ProgressMarker{"Application startup complete", Phase::waiting_for_health},
};
// Multi-node, from vllm-project/vllm docs/serving/parallelism_scaling.md (096bd6a: "--nnodes 2
// --node-rank 1 --master-addr HEAD --headless" on the worker node, mp backend) and
// docs/serving/data_parallel_deployment.md (01e4fce: "--data-parallel-size-local",
// "--data-parallel-start-rank" on the headless node, "--data-parallel-address",
// "--data-parallel-rpc-port" on both); spellings from vllm/engine/arg_utils.py's ParallelConfig
// group (add_cli_args), the master port's default (29501) from vllm/config/parallel.py;
// vllm/entrypoints/cli/serve.py (00a5fdd) run_headless: a headless rank with node rank > 0 runs
// the multiproc executor joined to master_addr:master_port, one with DP replicas starts
// data_parallel_size_local engine cores against data_parallel_address:data_parallel_rpc_port
// and refuses a local size of 0.
constexpr MultiNodeFlags kVllmMultiNode{
    .nnodes = "--nnodes",
    .node_rank = "--node-rank",
    .master_addr = "--master-addr",
    .master_port = "--master-port",
    .dp_size_local = "--data-parallel-size-local",
    .dp_start_rank = "--data-parallel-start-rank",
    .dp_address = "--data-parallel-address",
    .dp_rpc_port = "--data-parallel-rpc-port",
    .headless = "--headless",
    // vllm/v1/engine/core.py: after the handshake the engine cores connect to the front end's
    // input and output sockets, which rank 0 binds.
    .dp_joins_any_port = true,
};
constexpr std::array kVllmOom{
    OomSignature{"No available memory for the cache blocks", MemoryKnob::kv_cache_room},
    OomSignature{"is less than desired GPU memory utilization", MemoryKnob::mem_fraction},
};

// TensorRT-LLM: tensorrt_llm/commands/serve.py (flags; --kv_cache_free_gpu_memory_fraction
// 0.9, port 8000), checked against NVIDIA/TensorRT-LLM 4c05a74.
constexpr std::array kTrtllmFixed{std::string_view{"--backend"}, std::string_view{"pytorch"}};

// llama.cpp's llama-server: flags from tools/server/README.md (ggml-org/llama.cpp 00dc805) and
// common/arg.cpp (145b628): -m/--model, --host, --port, -ngl/--n-gpu-layers, -c/--ctx-size
// (default 0: the model's training context), -np/--parallel (default -1: auto, 4 slots),
// -a/--alias; port 8080 from common/common.h. /health answers 503 while the model loads and 200
// once it is ready. A GGUF file, no Python.
constexpr std::array kLlamacppProgress{
    // src/llama-model.cpp, load_tensors().
    ProgressMarker{"loading model tensors, this can take a while", Phase::loading_weights},
};
// ggml/src/ggml-cuda/ggml-cuda.cu, ggml_backend_cuda_buffer_type_alloc_buffer: "allocating
// 279356.51 MiB on device 0: cudaMalloc failed: out of memory". Its CUDA_CHECK failures print
// "CUDA error: out of memory", which the shared list already holds.
constexpr std::array kLlamacppOom{
    OomSignature{"cudaMalloc failed: out of memory", MemoryKnob::mem_fraction},
};
// Every layer on the GPU: a number every release takes (newer ones also take "all").
constexpr std::array kLlamacppFixed{std::string_view{"--n-gpu-layers"}, std::string_view{"999"}};

constexpr std::array kRows{
    EngineRow{
        .kind = EngineKind::sglang,
        .name = "sglang",
        .display = "SGLang",
        .launch = Launch::python_module,
        .program = "sglang.launch_server",
        .pip_dist = "sglang",
        .import_module = "sglang",
        .argv = ArgvBuilder::sglang,
        .model = ModelSource::path_or_hub_id,
        .default_port = 30000,
        .health_path = "/health",
        .readiness = "/health answers 200 once the model serves",
        // SGLang computes its share from the GPU's memory; 0.88 is what it picks on the
        // large GPUs gpulaunch targets, the start of the step-down ladder.
        .mem_fraction = {"--mem-fraction-static", "", 0.88},
        // SGLang sizes its own; step-down halves from 256 when the profile sets none.
        .max_requests = {"--max-running-requests", "", 256},
        .cuda_graph_max_bs = {"--cuda-graph-max-bs", "", std::nullopt},
        .context = {},
        .steps_down = true,
        .model_flag = "--model-path",
        .host_flag = "--host",
        .port_flag = "--port",
        .served_name_flag = "--served-model-name",
        .fixed_args = {},
        .splits_ranks = true,
        .no_ranks_hint = "",
        .multi_node = true,
        .dp_attention = true,
        .speculative = true,
        .dp_gpus = DpGpus::replicas_unless_dp_attention,
        .ep_rule = EpRule::divides_tp,
        .progress = kSglangProgress,
        .oom = kSglangOom,
    },
    EngineRow{
        .kind = EngineKind::vllm,
        .name = "vllm",
        .display = "vLLM",
        .launch = Launch::venv_program,
        .program = "vllm",
        .pip_dist = "vllm",
        .import_module = "vllm",
        .argv = ArgvBuilder::vllm,
        .model = ModelSource::path_or_hub_id,
        .default_port = 8000,
        .health_path = "/health",
        .readiness = "/health answers 200 once the model serves",
        .mem_fraction = {"--gpu-memory-utilization", "", 0.9},
        .max_requests = {"--max-num-seqs", "", 256},
        .cuda_graph_max_bs = {},
        .context = {},
        .steps_down = true,
        .model_flag = "",
        .host_flag = "--host",
        .port_flag = "--port",
        .served_name_flag = "--served-model-name",
        .fixed_args = {},
        .splits_ranks = true,
        .no_ranks_hint = "",
        .multi_node = true,
        .dp_attention = false,
        .speculative = true,
        .dp_gpus = DpGpus::replicas,
        // Its experts span the tp x dp ranks of the whole group.
        .ep_rule = EpRule::one_or_tp_times_dp,
        .progress = kVllmProgress,
        .oom = kVllmOom,
        .multi_node_flags = &kVllmMultiNode,
    },
    EngineRow{
        .kind = EngineKind::trtllm,
        .name = "trtllm",
        .display = "trtllm-serve",
        .launch = Launch::venv_program,
        .program = "trtllm-serve",
        .pip_dist = "tensorrt-llm",
        .import_module = "tensorrt_llm",
        .argv = ArgvBuilder::trtllm,
        .model = ModelSource::path_or_hub_id,
        .default_port = 8000,
        .health_path = "/health",
        .readiness = "/health answers 200 once the model serves",
        // A share of the memory left after the weights, not of the GPU: the supervisor does
        // not step it (nor anything else of trtllm-serve's) down.
        .mem_fraction = {"--kv_cache_free_gpu_memory_fraction", "", std::nullopt},
        .max_requests = {"--max_batch_size", "", std::nullopt},
        .cuda_graph_max_bs = {},
        .context = {},
        .steps_down = false,
        .model_flag = "",
        .host_flag = "--host",
        .port_flag = "--port",
        .served_name_flag = "",
        .fixed_args = kTrtllmFixed,
        .splits_ranks = true,
        .no_ranks_hint = "",
        .multi_node = false,
        .dp_attention = false,
        .speculative = false,
        .dp_gpus = DpGpus::none,
        .ep_rule = EpRule::divides_tp,
        .progress = {},
        .oom = {},
    },
    EngineRow{
        .kind = EngineKind::llamacpp,
        .name = "llamacpp",
        .display = "llama-server",
        .launch = Launch::executable,
        .program = "llama-server",
        .pip_dist = "",
        .import_module = "",
        .argv = ArgvBuilder::flags_only,
        .model = ModelSource::local_file,
        .default_port = 8080,
        .health_path = "/health",
        .readiness = "/health answers 503 while the model loads and 200 once it serves",
        .mem_fraction = {},
        // Both sized by llama-server itself unless engine.args sets them: stepped down only then.
        .max_requests = {"--parallel", "-np", std::nullopt},
        .cuda_graph_max_bs = {},
        .context = {"--ctx-size", "-c", std::nullopt},
        .steps_down = true,
        .model_flag = "--model",
        .host_flag = "--host",
        .port_flag = "--port",
        .served_name_flag = "--alias",
        .fixed_args = kLlamacppFixed,
        // It splits layers (--split-mode layer, the default) or rows over every GPU it sees.
        .splits_ranks = false,
        .no_ranks_hint = "llama-server splits the model over the unit's GPUs itself (give it "
                         "gpus.count, and --split-mode or --tensor-split in 'engine.args')",
        .multi_node = false,
        .dp_attention = false,
        .speculative = false,
        .dp_gpus = DpGpus::none,
        .ep_rule = EpRule::any,
        .progress = kLlamacppProgress,
        .oom = kLlamacppOom,
    },
    EngineRow{
        .kind = EngineKind::command,
        .name = "command",
        .display = "command",
        .launch = Launch::argv,
        .program = "",
        .pip_dist = "",
        .import_module = "",
        .argv = ArgvBuilder::command,
        .model = ModelSource::in_argv,
        .default_port = 8000,
        .health_path = "/health",
        .readiness = "server.health_path must answer 200 once it serves",
        .mem_fraction = {},
        .max_requests = {},
        .cuda_graph_max_bs = {},
        .context = {},
        .steps_down = false,
        .model_flag = "",
        .host_flag = "",
        .port_flag = "",
        .served_name_flag = "",
        .fixed_args = {},
        .splits_ranks = true,
        .no_ranks_hint = "",
        .multi_node = true,
        .dp_attention = false,
        .speculative = false,
        .dp_gpus = DpGpus::none,
        .ep_rule = EpRule::any,
        .progress = {},
        .oom = {},
    },
};

}  // namespace

std::span<const EngineRow> engine_rows() {
  return kRows;
}

const EngineRow& engine_row(EngineKind kind) {
  for (const auto& row : kRows)
    if (row.kind == kind) return row;
  return kRows.back();  // unreachable: every kind has a row (engines_test checks)
}

std::optional<EngineKind> parse_engine_kind(std::string_view name) {
  for (const auto& row : kRows)
    if (row.name == name) return row.kind;
  return std::nullopt;
}

std::string_view engine_kind_name(EngineKind kind) {
  return engine_row(kind).name;
}

std::vector<std::string> engine_kind_names() {
  std::vector<std::string> names;
  for (const auto& row : kRows) names.emplace_back(row.name);
  return names;
}

std::string engine_kinds_where(const std::function<bool(const EngineRow&)>& has,
                               std::string_view last) {
  std::vector<std::string_view> names;
  for (const auto& row : kRows)
    if (has(row)) names.push_back(row.name);
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? " " + std::string(last) + " " : ", ";
    text += names[i];
  }
  return text;
}

}  // namespace gl
