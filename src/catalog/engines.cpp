// SPDX-License-Identifier: Apache-2.0
#include "catalog/engines.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include <fmt/core.h>

#include "util/version.hpp"

namespace gl {
namespace {

using Pct = ProgressMarker::Percent;
using Edge = ProgressMarker::Edge;

constexpr unsigned long long kGiB = 1024;  // MiB

// SGLang's defaults from the GPU's memory: python/sglang/srt/arg_groups/memory_hook.py,
// handle_gpu_memory_settings (sgl-project/sglang 031ed82). Below each bound (GiB): the chunked
// prefill size and the decode CUDA graphs' largest batch, at tp < 4 and at tp >= 4.
struct SglangTier {
  unsigned long long below_gib;
  long long chunked_prefill;
  long long graph_bs_small_tp;
  long long graph_bs_large_tp;
};
constexpr std::array kSglangTiers{
    SglangTier{20, 2048, 8, 8},       // T4, RTX 4080
    SglangTier{35, 4096, 48, 160},    // A10, RTX 4090, RTX 5090
    SglangTier{60, 4096, 32, 160},    // A100 40GB, L40
    SglangTier{90, 8192, 256, 512},   // H100, A100 80GB
    SglangTier{160, 8192, 256, 512},  // H20, H200
    SglangTier{0, 16384, 512, 512}    // B200, MI300: 160 GiB and above
};
// Without the GPU's memory: graphs up to 160 and a share of 0.95.
constexpr long long kSglangUnknownGraphBs = 160;
constexpr double kSglangUnknownFraction = 0.95;

const SglangTier& sglang_tier(unsigned long long memory_mib) {
  for (size_t i = 0; i + 1 < kSglangTiers.size(); ++i)
    if (memory_mib < kSglangTiers[i].below_gib * kGiB) return kSglangTiers[i];
  return kSglangTiers.back();  // and above
}

long long sglang_graph_bs(const GpuContext& gpus) {
  if (!gpus.memory_mib) return kSglangUnknownGraphBs;
  const SglangTier& tier = sglang_tier(*gpus.memory_mib);
  return gpus.tp < 4 ? tier.graph_bs_small_tp : tier.graph_bs_large_tp;
}

// SGLang's mem_fraction_static when unset: (memory - reserved) / memory, rounded to 3 places,
// reserving 512 MiB, 1.5 MiB per chunked-prefill token (at least 2048), 2 MiB per decode graph
// batch, tp x pp / 8 GiB, and on GPUs over 60 GiB at least 10 GiB. It also reserves for prefill
// graphs, DP attention, DeepEP and vision towers, which the profile alone does not tell: this
// errs a little high there, and the first step still lowers it.
KnobDefault sglang_mem_fraction(const GpuContext& gpus) {
  if (!gpus.memory_mib || *gpus.memory_mib == 0)
    return {kSglangUnknownFraction,
            fmt::format("SGLang default {} (GPU memory unknown)", kSglangUnknownFraction)};
  const auto memory = static_cast<double>(*gpus.memory_mib);
  const SglangTier& tier = sglang_tier(*gpus.memory_mib);
  double reserved = 512 + static_cast<double>(std::max(tier.chunked_prefill, 2048LL)) * 1.5 +
                    static_cast<double>(sglang_graph_bs(gpus)) * 2 +
                    static_cast<double>(gpus.tp * gpus.pp) / 8 * 1024;
  if (*gpus.memory_mib > 60 * kGiB) reserved = std::max(reserved, 10.0 * 1024);
  const double fraction = std::round((memory - reserved) / memory * 1000) / 1000;
  return {fraction, fmt::format("SGLang default for {} MiB GPUs at tp {}, pp {}: {} (reserves {} "
                                "MiB)",
                                *gpus.memory_mib, gpus.tp, gpus.pp, fraction, reserved)};
}

KnobDefault sglang_graph_max_bs(const GpuContext& gpus) {
  const long long bs = sglang_graph_bs(gpus);
  if (!gpus.memory_mib)
    return {static_cast<double>(bs), fmt::format("SGLang default {} (GPU memory unknown)", bs)};
  return {static_cast<double>(bs), fmt::format("SGLang default for {} MiB GPUs at tp {}: {}",
                                               *gpus.memory_mib, gpus.tp, bs)};
}

// SGLang sizes its requests in flight from the KV pool itself; step-down starts from 256.
KnobDefault sglang_max_requests(const GpuContext&) {
  return {256, "gpulaunch's start for SGLang, which sizes it itself: 256"};
}

// vLLM: vllm/config/cache.py, CacheConfig.gpu_memory_utilization (vllm-project/vllm 002f10e).
KnobDefault vllm_gpu_memory_utilization(const GpuContext&) {
  return {0.92, "vLLM default 0.92"};
}

// vLLM: vllm/engine/arg_utils.py, get_batch_defaults (vllm-project/vllm 99d7eb5): 1024 for
// `vllm serve` on GPUs of 70 GiB or more whose name has no "a100" (larger batches lose
// throughput there), 256 elsewhere and where the GPU cannot be read.
KnobDefault vllm_max_num_seqs(const GpuContext& gpus) {
  std::string name = gpus.name;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (!gpus.memory_mib) return {256, "vLLM default 256 (GPU memory unknown)"};
  if (*gpus.memory_mib >= 70 * kGiB && name.find("a100") == std::string::npos)
    return {1024, fmt::format("vLLM default for GPUs of 70 GiB or more other than A100 ({} MiB): "
                              "1024",
                              *gpus.memory_mib)};
  return {256, fmt::format("vLLM default for {} MiB {}: 256", *gpus.memory_mib,
                           name.find("a100") != std::string::npos ? "A100" : "GPUs")};
}

// SGLang: python/sglang/srt/server_args.py (flags), model_executor/model_runner.py and
// cuda_graph_runner.py (the lines below), checked against sgl-project/sglang 469c63e.
// Weight loading: python/sglang/srt/model_loader/weight_utils.py (sglang v0.5.10): the default
// loader's tqdm says "Multi-thread loading shards: N% Completed | k/n [...]"; older ones and the
// single-thread loaders say "Loading safetensors checkpoint shards" (or "... pt checkpoint
// shards"). tqdm leads each update with '\r'; run's bridge reads every update as a line.
// Where a phase ends: model_runner.py load_model (sgl-project/sglang 0005834) logs "Load weight
// begin. avail mem=..." and, once loaded, "Load weight end. elapsed=..."; device_graphs.py
// init_device_graphs (2867a68) "Capture cuda graph begin. This can take up to several
// minutes. ..." and "Capture cuda graph end. Time elapsed: ..." (the EAGLE draft's "Capture draft
// cuda graph begin/end" the same way); later main (2026, read in indexed copies of the model
// runner, commit not pinned) spells it "Capture target decode CUDA graph begin. backend=..." and
// "Capture target prefill CUDA graph end. elapsed=...". Kernel JIT: the DeepGEMM wrapper
// (python/sglang/srt/layers/deep_gemm_wrapper/compile_utils.py, 93d0487) warns "Entering DeepGEMM
// JIT Pre-Compile session. It may take a long time (typically 10-20 mins) ..." before compiling
// for every M, inside the graph capture; FlashInfer up to v0.2.5 logged "Loading JIT ops: NAME"
// and "Finished loading JIT ops: NAME" around each build (flashinfer/jit/core.py,
// load_cuda_ops; v0.2.6 and later, through fb28d72, build in silence: run watches the JIT caches
// grow instead).
constexpr std::array kSglangProgress{
    ProgressMarker{"Load weight begin", Phase::weights, Pct::in_line},
    ProgressMarker{"Load weight end", Phase::weights, Pct::complete, Edge::ends},
    ProgressMarker{"Multi-thread loading shards", Phase::weights, Pct::in_line},
    ProgressMarker{"checkpoint shards", Phase::weights, Pct::in_line},
    ProgressMarker{"cuda graph begin", Phase::cuda_graphs},
    ProgressMarker{"CUDA graph begin", Phase::cuda_graphs},
    ProgressMarker{"cuda graph end. ", Phase::cuda_graphs, Pct::none, Edge::ends},
    ProgressMarker{"CUDA graph end. ", Phase::cuda_graphs, Pct::none, Edge::ends},
    ProgressMarker{"Entering DeepGEMM JIT Pre-Compile session", Phase::jit_compile},
    ProgressMarker{"Finished loading JIT ops: ", Phase::jit_compile, Pct::none, Edge::ends},
    ProgressMarker{"Loading JIT ops: ", Phase::jit_compile},
    ProgressMarker{"fired up and ready to roll", Phase::health},
    // uvicorn, which SGLang and vLLM both serve through.
    ProgressMarker{"Application startup complete", Phase::health},
};
// field-facts §7; first match wins, so the specific advice comes before torch's generic error.
constexpr std::array kSglangOom{
    // alloc_req_slots, python/sglang/srt/mem_cache/common.py (copies in the code index; the file's
    // indexed commit is 2752c82): no request row is left in req_to_token_pool, and SGLang asks for
    // a smaller --max-running-requests.
    OomSignature{"alloc_req_slots runs out of memory", MemoryKnob::max_requests},
    // alloc_token_slots, python/sglang/srt/mem_cache/common.py (sgl-project/sglang 2752c82): the KV
    // pool has no slot left for the batch's tokens, "Out of memory. Try to lower your batch
    // size."; releases before it (v0.4) say "Prefill out of memory. ..." or "Decode out of
    // memory. ...", which this text is part of.
    OomSignature{"out of memory. Try to lower your batch size", MemoryKnob::max_requests},
    OomSignature{"Out of memory. Try to lower your batch size", MemoryKnob::max_requests},
    // The capture's own text; kSglangNotOom says when it was no OOM at all.
    OomSignature{"Capture cuda graph failed", MemoryKnob::cuda_graph_max_bs},
    // Weights loaded, but the static share leaves nothing for the KV cache: SGLang and vLLM
    // both advise a larger share; a smaller one would fail the same way sooner.
    OomSignature{"Not enough memory. Please try to increase --mem-fraction-static",
                 MemoryKnob::kv_cache_room},
};
// python/sglang/srt/model_executor/cuda_graph_backend_utils/__init__.py,
// cuda_graph_capture_failed_msg (sgl-project/sglang f438a11): after "Capture cuda graph failed:
// ..." SGLang says which failures are no shortage of memory (all but torch's OOM and cuBLAS's
// allocation errors); lowering the share or the graphs' batch does not help those.
constexpr std::array kSglangNotOom{
    std::string_view{"This is not an out-of-memory error"},
    std::string_view{"not from a GPU memory shortage"},
};

// vLLM: vllm/engine/arg_utils.py (flags), model_executor and worker/gpu_model_runner.py (the
// lines below).
// vllm/model_executor/model_loader/weight_utils.py (vLLM 0.11): "Loading safetensors checkpoint
// shards", and "Multi-thread loading shards" with enable_multithread_load.
// Where a phase ends: the weights with default_loader.py's "Loading weights took %.2f seconds"
// (info in vLLM 0.11, debug in later main) and the GPU model runner's "Model loading took %s GiB
// memory and %.6f seconds" (vllm/v1/worker/gpu_model_runner.py, both read in indexed copies);
// torch.compile begins with vllm/compilation/backends.py's "Using cache directory: %s for vLLM's
// torch.compile" (or "Dynamo bytecode transform time"), reports "Compiling a graph for dynamic
// shape takes %.2f s" per graph and ends with vllm/compilation/monitor.py's "torch.compile takes
// %.2f s in total" (vllm-project/vllm 0015838); the graph capture's tqdm bar is "Capturing CUDA
// graphs (mixed prefill-decode, PIECEWISE)" and it ends with gpu_model_runner.py's "Graph
// capturing finished in %.0f secs, took %.2f GiB". First match wins: each ending line comes
// before the shorter marker it contains.
constexpr std::array kVllmProgress{
    ProgressMarker{"Loading weights took", Phase::weights, Pct::complete, Edge::ends},
    ProgressMarker{"Model loading took", Phase::weights, Pct::complete, Edge::ends},
    ProgressMarker{"Loading weights", Phase::weights, Pct::in_line},
    ProgressMarker{"checkpoint shards", Phase::weights, Pct::in_line},
    ProgressMarker{"Multi-thread loading shards", Phase::weights, Pct::in_line},
    ProgressMarker{"Starting to load model", Phase::weights, Pct::in_line},
    ProgressMarker{"Graph capturing finished", Phase::cuda_graphs, Pct::none, Edge::ends},
    ProgressMarker{"Capturing CUDA graph", Phase::cuda_graphs},
    ProgressMarker{"Capturing CUDA graphs", Phase::cuda_graphs},
    ProgressMarker{"torch.compile takes", Phase::torch_compile, Pct::none, Edge::ends},
    ProgressMarker{"Compiling a graph", Phase::torch_compile},
    ProgressMarker{"Dynamo bytecode transform time", Phase::torch_compile},
    ProgressMarker{"torch.compile", Phase::torch_compile},
    ProgressMarker{"Application startup complete", Phase::health},
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
    // vllm/v1/core/kv_cache_utils.py, check_enough_kv_cache_memory: no memory at all is left for
    // the KV cache once the weights and activations are counted ("No available memory for the
    // cache blocks. Try increasing `gpu_memory_utilization` ..."; read in indexed copies, the
    // same text as the v0 worker's raise_if_cache_size_invalid).
    OomSignature{"No available memory for the cache blocks", MemoryKnob::kv_cache_room},
    // The GPU worker's start-up check (vllm/v1/worker, "Free memory on device ... on startup is
    // less than desired GPU memory utilization (share, GiB). Decrease GPU memory utilization or
    // reduce GPU memory used by other processes."): the share asks for more than is free now.
    // Read in an indexed copy of the worker; file and commit not pinned.
    OomSignature{"is less than desired GPU memory utilization", MemoryKnob::mem_fraction},
};

// vllm/v1/core/kv_cache_utils.py, check_enough_kv_cache_memory (vllm-project/vllm bbf906a): one
// request of max_model_len does not fit in the KV cache ("... model's max seq len (N), X GiB KV
// cache is needed, which is larger than the available KV cache memory (Y GiB). ... Try
// increasing `gpu_memory_utilization` or decreasing `max_model_len` ..."; older releases spell
// it "models's"). Every start fails the same way.
constexpr std::array kVllmConfigErrors{
    ConfigErrorSignature{"To serve at least one request with the model",
                         "one request of the model's full context does not fit in the KV cache: "
                         "set a shorter --max-model-len in 'engine.args', raise "
                         "'engine.mem_fraction', or spread the model over more GPUs"},
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
    ProgressMarker{"loading model tensors, this can take a while", Phase::weights},
};
// ggml/src/ggml-cuda/ggml-cuda.cu, ggml_backend_cuda_buffer_type_alloc_buffer: "allocating
// 279356.51 MiB on device 0: cudaMalloc failed: out of memory". Its CUDA_CHECK failures print
// "CUDA error: out of memory", which the shared list already holds.
constexpr std::array kLlamacppOom{
    OomSignature{"cudaMalloc failed: out of memory", MemoryKnob::mem_fraction},
};
// Every layer on the GPU: a number every release takes (newer ones also take "all").
constexpr std::array kLlamacppFixed{std::string_view{"--n-gpu-layers"}, std::string_view{"999"}};

// SGLang: python/sglang/srt/arg_groups/fields/spec.py, speculative_algorithm's builtins
// (sgl-project/sglang 015c872). NEXTN is its name for a model's own MTP layers (vLLM's mtp),
// STANDALONE a separate draft model (vLLM's draft_model).
constexpr std::array kSglangSpeculative{
    SpeculativeMethod{"EAGLE", "eagle"},   SpeculativeMethod{"EAGLE3", "eagle3"},
    SpeculativeMethod{"NEXTN", "mtp"},     SpeculativeMethod{"STANDALONE", "draft_model"},
    SpeculativeMethod{"NGRAM", "ngram"},   SpeculativeMethod{"DFLASH", "dflash"},
    SpeculativeMethod{"DSPARK", "dspark"}, SpeculativeMethod{"UNO", ""},
};
// vLLM: vllm/config/speculative.py, SpeculativeMethod (vllm-project/vllm 002e77c; the per-model
// MTP types such as deepseek_mtp all run as mtp; custom_class needs code of one's own).
constexpr std::array kVllmSpeculative{
    SpeculativeMethod{"eagle", "EAGLE"},     SpeculativeMethod{"eagle3", "EAGLE3"},
    SpeculativeMethod{"mtp", "NEXTN"},       SpeculativeMethod{"draft_model", "STANDALONE"},
    SpeculativeMethod{"ngram", "NGRAM"},     SpeculativeMethod{"dflash", "DFLASH"},
    SpeculativeMethod{"ngram_gpu", ""},      SpeculativeMethod{"medusa", ""},
    SpeculativeMethod{"mlp_speculator", ""}, SpeculativeMethod{"suffix", ""},
    SpeculativeMethod{"dspark", "DSPARK"},   SpeculativeMethod{"extract_hidden_states", ""},
};

// Liveness, per engine (server.liveness; run/liveness decides, run/bridge asks).
constexpr std::string_view kVllmKeyFlags[] = {"--api-key", "--api_key"};
constexpr std::string_view kVllmKeyVariables[] = {"VLLM_API_KEY"};
constexpr std::string_view kLlamacppKeyFlags[] = {"--api-key", "--api_key"};
constexpr std::string_view kLlamacppKeyFileFlags[] = {"--api-key-file", "--api_key_file"};
constexpr std::string_view kLlamacppKeyVariables[] = {"LLAMA_API_KEY"};
//
// SGLang: python/sglang/srt/entrypoints/http_server.py (sgl-project/sglang 0025436):
// GET /health and /health_generate are one handler: it submits a one-token generation
// (max_new_tokens 1) and answers 200 as soon as anything came back from the scheduler since the
// request arrived (another request's output counts, so a busy server answers at once and the
// probe costs nothing), 503 after SGLANG_HEALTH_CHECK_TIMEOUT seconds (20) without. Its
// Prometheus /metrics needs --enable-metrics (server_args.py). The in-flight gauge is
// sglang:num_running_reqs; sglang:generation_tokens_total counts a request's tokens only when
// it finishes (tokenizer-side collector), so the live counter is
// sglang:realtime_tokens_total{mode=prefill_compute|prefill_cache|decode}, which the scheduler
// adds to on each log interval (sglang test/registered/metrics, 2026; releases before it lack it,
// and then run has no token signal from the metrics). An idle scheduler refreshes its gauges
// only every 30 s (python/sglang/srt/managers/scheduler_runtime_checker_mixin.py, 2026: "During
// idle time, also collect metrics every 30 seconds"), so the running gauge may say requests for
// 30 s after the last one ended. --api-key guards neither /health* nor /metrics
// (python/sglang/srt/utils/common.py add_api_key_middleware, 2026): the probe needs no key. A rank
// above 0 of a multi-node group serves launch_dummy_health_check_server (same file): /health and
// /health_generate answer 200 whatever the scheduler does.
constexpr LivenessFacts kSglangLiveness{
    .probe = {.method = "GET",
              .path = "/health_generate",
              .one_token_field = "",
              .names_model = false,
              .source = "python/sglang/srt/entrypoints/http_server.py, sgl-project/sglang "
                        "0025436"},
    .api_key = {},
    .metrics = {.path = "/metrics",
                .in_flight = "sglang:num_running_reqs",
                .tokens = "sglang:realtime_tokens_total",
                .enable_flag = "--enable-metrics",
                .busy_needs_metrics = false,
                .refresh = std::chrono::seconds{30},
                .source = "python/sglang/srt/metrics/collector.py, "
                          "python/sglang/srt/managers/scheduler_runtime_checker_mixin.py, "
                          "sgl-project/sglang 2026"},
    .default_mode = LivenessMode::generate,
    .health_generates = true,
    .ranks_stub_health = true,
    .ranks_source =
        "python/sglang/srt/utils/common.py launch_dummy_health_check_server, "
        "sgl-project/sglang 2026",
};
// vLLM: POST /v1/completions (vllm/entrypoints/openai/protocol.py CompletionRequest: `model` is
// optional in current releases and required in older ones; the served name is sent, which both
// accept); max_tokens caps the answer. --api-key (or VLLM_API_KEY) guards every /v1 path, not
// /health or /metrics (vllm/entrypoints/openai/api_server.py); FlexibleArgumentParser takes
// --api_key for --api-key, both with "=" or a separate value, and --config FILE, a YAML file whose
// keys become flags (vllm/utils/argparse_utils.py, vllm-project/vllm main 2026). Without a key
// gpulaunch may use, no probe is sent and the metrics alone watch the engine. Prometheus
// /metrics is always on:
// vllm/v1/metrics/loggers.py, PrometheusStatLogger (vllm-project/vllm main, 2026): the gauge
// vllm:num_requests_running and the counter vllm:generation_tokens (exposed with _total), both
// labelled per engine, the counter added to on every engine step.
constexpr LivenessFacts kVllmLiveness{
    .probe = {.method = "POST",
              .path = "/v1/completions",
              .one_token_field = "max_tokens",
              .names_model = true,
              .source = "vllm/entrypoints/openai/protocol.py, vllm-project/vllm main 2026"},
    .api_key = {.flags = kVllmKeyFlags,
                .file_flags = {},
                .variables = kVllmKeyVariables,
                .config_flag = "--config",
                .guards_metrics = false,
                .source = "vllm/entrypoints/openai/cli_args.py, vllm/envs.py, "
                          "vllm/utils/argparse_utils.py, vllm-project/vllm main 2026"},
    .metrics = {.path = "/metrics",
                .in_flight = "vllm:num_requests_running",
                .tokens = "vllm:generation_tokens_total",
                .enable_flag = "",
                .busy_needs_metrics = false,
                .refresh = std::chrono::seconds{0},
                .source = "vllm/v1/metrics/loggers.py, vllm-project/vllm main 2026"},
    .default_mode = LivenessMode::generate,
    .health_generates = false,
    .ranks_stub_health = false,
    .ranks_source = "",
};
// trtllm-serve: tensorrt_llm/serve/openai_server.py (NVIDIA/TensorRT-LLM 0005772, e7f7345): GET
// /health_generate runs a one-token chat completion (max_completion_tokens 1), which fails (500)
// for every model without a chat template, so the probe is POST /v1/completions with the served
// name (`model` is required there, openai_protocol.py 0076e93) and max_tokens 1: a plain prompt,
// no template. The probe waits in the ordinary queue. Progress comes from GET /metrics, a JSON
// list of the iteration statistics gathered since the last read (get_iteration_stats over
// llm.get_stats_async(2): each read drains them; "[]" when no iteration ran), which the executor
// records only with enable_iter_perf_stats, a top-level key of the LLM-API arguments
// (tensorrt_llm/llmapi/llm_args.py TorchLlmArgs, fcd3f31) read from the YAML file
// --extra_llm_api_options names (tensorrt_llm/commands/serve.py 4c05a74, where --config is its
// other spelling; docs/source/commands/trtllm-serve.rst). Each entry's "iter" numbers the
// iteration. Its numActiveRequests is counted as the iteration starts
// (tensorrt_llm/_torch/pyexecutor/py_executor.py _get_init_iter_stats), so the last entry before
// the engine idles still counts the request that finished in it: no in-flight gauge, and the
// iterations only vouch for the probe that waits behind them. /prometheus/metrics exists only
// with return_perf_metrics and has no in-flight gauge either.
constexpr std::string_view kTrtllmOptionsFileFlags[] = {"--extra_llm_api_options", "--config"};
constexpr LivenessFacts kTrtllmLiveness{
    .probe = {.method = "POST",
              .path = "/v1/completions",
              .one_token_field = "max_tokens",
              .names_model = true,
              .source = "tensorrt_llm/serve/openai_server.py, openai_protocol.py, "
                        "NVIDIA/TensorRT-LLM 0005772"},
    .api_key = {},
    .metrics = {.path = "/metrics",
                .format = MetricsFormat::iteration_stats,
                .in_flight = "",
                .tokens = "iter",
                .enable_flag = "",
                .options_file_flags = kTrtllmOptionsFileFlags,
                .options_file_name = "gpulaunch-llm-api-options.yaml",
                .options_file_text = "enable_iter_perf_stats: true\n",
                .busy_needs_metrics = true,
                .refresh = std::chrono::seconds{0},
                .source = "tensorrt_llm/serve/openai_server.py e7f7345, "
                          "tensorrt_llm/llmapi/llm_args.py fcd3f31, "
                          "tensorrt_llm/_torch/pyexecutor/py_executor.py, NVIDIA/TensorRT-LLM"},
    .default_mode = LivenessMode::generate,
    .health_generates = false,
    .ranks_stub_health = false,
    .ranks_source = "",
};
// llama-server: POST /completion with n_predict 1 (tools/server/README.md, ggml-org/llama.cpp
// 00dc805). The key: --api-key KEY (env LLAMA_API_KEY) or --api-key-file FILE, one key a line
// (common/arg.cpp, which reads '_' as '-' in a "--" argument and takes no "=VALUE" form); it guards
// every path but /health, /v1/health and the model list, /metrics included
// (tools/server/server.cpp, its API-key middleware's public endpoints). Prometheus /metrics only
// with
// --metrics: llamacpp:requests_processing (gauge) and llamacpp:n_decode_total (llama_decode()
// calls, moving while any slot decodes); llamacpp:tokens_predicted_total is added to only when a
// request ends. A task that finds no idle slot is deferred on the task queue until one frees
// (tools/server/server.cpp), so the probe waits behind long generations:
// liveness "generate" turns --metrics on for the token counter.
constexpr LivenessFacts kLlamacppLiveness{
    .probe = {.method = "POST",
              .path = "/completion",
              .one_token_field = "n_predict",
              .names_model = false,
              .source = "tools/server/README.md, ggml-org/llama.cpp 00dc805"},
    .api_key = {.flags = kLlamacppKeyFlags,
                .file_flags = kLlamacppKeyFileFlags,
                .variables = kLlamacppKeyVariables,
                .config_flag = "",
                .guards_metrics = true,
                .source = "common/arg.cpp, tools/server/server.cpp, ggml-org/llama.cpp 00dc805"},
    .metrics = {.path = "/metrics",
                .in_flight = "llamacpp:requests_processing",
                .tokens = "llamacpp:n_decode_total",
                .enable_flag = "--metrics",
                .busy_needs_metrics = true,
                .refresh = std::chrono::seconds{0},
                .source = "tools/server/server.cpp, ggml-org/llama.cpp 00dc805"},
    .default_mode = LivenessMode::generate,
    .health_generates = false,
    .ranks_stub_health = false,
    .ranks_source = "",
};
// A command: no API gpulaunch knows; its health endpoint is all there is.
constexpr LivenessFacts kCommandLiveness{
    .probe = {},
    .api_key = {},
    .metrics = {},
    .default_mode = LivenessMode::health,
    .health_generates = false,
    .ranks_stub_health = false,
    .ranks_source = "",
};

// Drain, per engine: what SIGTERM does (server.drain_timeout; the engine's flag where it has one).
//
// vLLM: --shutdown-timeout SECONDS (vllm/engine/arg_utils.py EngineArgs.shutdown_timeout, added by
// vllm-project/vllm#34730, reverted by #36628 and re-applied by #36666 before the v0.18.0 release,
// its first). Its default, 0, aborts in-flight requests at once on SIGTERM; with N > 0 the API
// server answers new requests 503, waits up to N seconds for those in flight, then aborts the
// rest and exits.
constexpr DrainFacts kVllmDrain{
    .flag = "--shutdown-timeout",
    .behaviour =
        "SIGTERM: new requests get 503, those in flight get up to --shutdown-timeout "
        "seconds (from server.drain_timeout), then the rest are aborted",
    .source =
        "vllm/engine/arg_utils.py (shutdown_timeout), vllm-project/vllm#34730 and #36666, v0.18.0",
};
// SGLang: no flag. TokenizerManager's SIGTERM handler sets a flag that sigterm_watchdog reads
// every 5 s; it then waits, 5 s at a time and logging "Gracefully exiting... Remaining number of
// requests N", until no request is left (or at once when health already failed, or
// SGL_FORCE_SHUTDOWN is set), kills its process tree and exits 0. The wait has no bound: `run`'s
// SIGKILL after server.drain_timeout is it.
constexpr DrainFacts kSglangDrain{
    .flag = "",
    .behaviour =
        "SIGTERM: waits for in-flight requests, checking every 5 s, with no bound of its "
        "own; server.drain_timeout bounds it",
    .source =
        "python/sglang/srt/managers/tokenizer_manager.py (sigterm_watchdog), "
        "sgl-project/sglang c60799d",
};
// trtllm-serve: no flag. serve_http turns SIGINT/SIGTERM into uvicorn's shutdown: no new
// connections, in-flight requests awaited, no bound of its own.
constexpr DrainFacts kTrtllmDrain{
    .flag = "",
    .behaviour =
        "SIGTERM: uvicorn stops accepting and awaits in-flight requests, with no bound "
        "of its own; server.drain_timeout bounds it",
    .source = "tensorrt_llm/serve/launcher.py (serve_http), NVIDIA/TensorRT-LLM a5477d3",
};
// llama-server and a command: plain SIGTERM, whatever the program makes of it.
constexpr DrainFacts kPlainSigterm{
    .flag = "",
    .behaviour = "SIGTERM, whatever the program makes of it; server.drain_timeout bounds it",
    .source = "",
};

// The flags gpulaunch adds that not every release takes, one table for every engine. A flag
// absent here is in every release gpulaunch supports.
constexpr std::array kFlagVersions{
    // The phase-split CUDA-graph flags: sgl-project/sglang #23906 ("[Refactor] Cuda Graph
    // Runner/Backend Refactor"; its review of 2026-06-01 shows python/sglang/srt/server_args.py
    // gaining cuda_graph_max_bs_decode among the per-phase inputs) adds --cuda-graph-max-bs-decode
    // and keeps --cuda-graph-max-bs as a DeprecatedAliasStoreAction storing into it, so the old
    // spelling works everywhere (with a warning on new releases); an older SGLang exits 2 on the
    // new one ("unrecognized arguments"). sgl-project/sglang-omni #1048 (2026-07-13) moves from
    // 0.5.12.post1, which lacks the phase-aware runtime, to 0.5.15, which has it: 0.5.15 is the
    // first release known to take the flag. 0.5.13 and 0.5.14 were not read; they get the old
    // spelling, which every release takes, so a guess costs at most the deprecation warning.
    FlagVersions{EngineKind::sglang, "--cuda-graph-max-bs-decode", "0.5.15", "--cuda-graph-max-bs",
                 "python/sglang/srt/server_args.py, sgl-project/sglang #23906 (2026-06), "
                 "v0.5.15 (sgl-project/sglang-omni #1048)",
                 "0.5.12"},
    // The multiprocessing executor's own multi-node rendezvous (vllm-project/vllm #23691, "[V1]
    // Support MP Executor for multi node distributed inference", merged after v0.11.0 was cut):
    // vllm/engine/arg_utils.py's parallel group adds --nnodes/-n, --node-rank/-r, --master-addr
    // and --master-port; before it, multi-node tp x pp needed a Ray cluster, which gpulaunch does
    // not run.
    FlagVersions{EngineKind::vllm, "--nnodes", "0.11.1", "",
                 "vllm/engine/arg_utils.py, vllm-project/vllm #23691, v0.11.1", "0.11.0"},
    FlagVersions{EngineKind::vllm, "--node-rank", "0.11.1", "",
                 "vllm/engine/arg_utils.py, vllm-project/vllm #23691, v0.11.1", "0.11.0"},
    FlagVersions{EngineKind::vllm, "--master-addr", "0.11.1", "",
                 "vllm/engine/arg_utils.py, vllm-project/vllm #23691, v0.11.1", "0.11.0"},
    FlagVersions{EngineKind::vllm, "--master-port", "0.11.1", "",
                 "vllm/engine/arg_utils.py, vllm-project/vllm #23691, v0.11.1", "0.11.0"},
    // Multi-node data parallelism and headless ranks (kVllmMultiNode): vllm-project/vllm #15977
    // ("[V1] DP scale-out (2/N)", in review 2025-04-04) adds --data-parallel-size-local and
    // --data-parallel-start-rank (vllm/engine/arg_utils.py, vllm/entrypoints/cli/serve.py) with
    // headless engine ranks; vllm-project/vllm-ascend #649 (2025-04-25) still describes --headless
    // and --data-parallel-size-local as coming. The range read from those two, not from a tagged
    // source: v0.8.4 (2025-04-14) taken to lack them, v0.9.0 the first release to have them;
    // v0.8.5 (2025-04-28) lies between, where check warns instead of refusing.
    FlagVersions{EngineKind::vllm, "--headless", "0.9.0", "",
                 "vllm/entrypoints/cli/serve.py, vllm-project/vllm #15977, v0.9.0", "0.8.4"},
    FlagVersions{EngineKind::vllm, "--data-parallel-size-local", "0.9.0", "",
                 "vllm/engine/arg_utils.py, vllm-project/vllm #15977, v0.9.0", "0.8.4"},
    FlagVersions{EngineKind::vllm, "--data-parallel-start-rank", "0.9.0", "",
                 "vllm/entrypoints/cli/serve.py, vllm-project/vllm #15977, v0.9.0", "0.8.4"},
    FlagVersions{EngineKind::vllm, "--data-parallel-address", "0.9.0", "",
                 "vllm/engine/arg_utils.py, vllm-project/vllm #15977, v0.9.0", "0.8.4"},
    FlagVersions{EngineKind::vllm, "--data-parallel-rpc-port", "0.9.0", "",
                 "vllm/engine/arg_utils.py, vllm-project/vllm #15977, v0.9.0", "0.8.4"},
    // The drain bound (kVllmDrain): vllm/engine/arg_utils.py EngineArgs.shutdown_timeout.
    FlagVersions{
        EngineKind::vllm, "--shutdown-timeout", "0.18.0", "",
        "vllm/engine/arg_utils.py (shutdown_timeout), vllm-project/vllm#34730 and #36666, v0.18.0"},
};

constexpr std::array kRows{
    EngineRow{
        .kind = EngineKind::sglang,
        .name = "sglang",
        .display = "SGLang",
        .launch = Launch::python_module,
        .program = "sglang.launch_server",
        // `sglang serve` (python/sglang/cli/main.py and cli/serve.py, added by
        // sgl-project/sglang #12484, merged 2025-11) runs the same run_server; pyproject.toml's
        // [project.scripts] installs it as bin/sglang (sglang.cli.main:main). launch_server.py
        // (046a9e4) still works but warns "'python -m sglang.launch_server' is still supported,
        // but 'sglang serve' is the recommended entrypoint.". 0.5.6 (2025-12) is the first tag we
        // know holds it; 0.5.5 may too, but then the old launcher only costs the warning.
        .serve_script = {"sglang", "serve", "0.5.6"},
        .pip_dist = "sglang",
        .import_module = "sglang",
        .argv = ArgvBuilder::sglang,
        .model = ModelSource::path_or_hub_id,
        .default_port = 30000,
        .health_path = "/health",
        .readiness = "/health answers 200 once the model serves",
        // python/sglang/srt/entrypoints/http_server.py (sgl-project/sglang main, 2026; the
        // timeout's default of 20 unchanged since 9c0549b): /health (as /health_generate) submits
        // a one-token generation, polls once a second and answers 200 once anything came back,
        // 503 after SGLANG_HEALTH_CHECK_TIMEOUT seconds; SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION=0
        // makes /health answer at once.
        .health_answer = std::chrono::seconds{20},
        .health_answer_variable = "SGLANG_HEALTH_CHECK_TIMEOUT",
        // SGLang computes its share from the GPU's memory (sglang_mem_fraction).
        .mem_fraction = {"--mem-fraction-static", "", sglang_mem_fraction, kSglangUnknownFraction},
        .max_requests = {"--max-running-requests", "", sglang_max_requests, 256},
        // SGLang warns "--cuda-graph-max-bs is deprecated, use --cuda-graph-max-bs-decode"
        // (the phase-split graph flags, sgl-project/sglang #29591, 2026-06; its capture hint in
        // cuda_graph_backend_utils/__init__.py f438a11 names the new one); both are recognised in
        // engine.args.
        .cuda_graph_max_bs = {"--cuda-graph-max-bs-decode", "--cuda-graph-max-bs",
                              sglang_graph_max_bs, 512},
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
        .speculative_methods = kSglangSpeculative,
        .dp_gpus = DpGpus::replicas_unless_dp_attention,
        .ep_rule = EpRule::divides_tp,
        .mig = MigSupport::one_instance,
        .mig_source = "SGLang picks devices by torch ordinal under CUDA_VISIBLE_DEVICES "
                      "(server_args.py base_gpu_id, 2026); no MIG failure reported upstream",
        .progress = kSglangProgress,
        .oom = kSglangOom,
        .not_oom = kSglangNotOom,
        .config_errors = {},
        .liveness = kSglangLiveness,
        .drain = kSglangDrain,
        // The scheduler caps a request at min(context_len - 1, max_total_num_tokens - 1) tokens
        // and starts; only a pool of nothing ("Memory pool size is too small") stops it.
        .kv_shortfall =
            {true, "SGLang caps each request at the tokens its KV pool holds and serves",
             "python/sglang/srt/managers/tp_worker.py (max_req_len), sgl-project/sglang "
             "2026"},
    },
    EngineRow{
        .kind = EngineKind::vllm,
        .name = "vllm",
        .display = "vLLM",
        .launch = Launch::venv_program,
        .program = "vllm",
        .serve_script = {},
        .pip_dist = "vllm",
        .import_module = "vllm",
        .argv = ArgvBuilder::vllm,
        .model = ModelSource::path_or_hub_id,
        .default_port = 8000,
        .health_path = "/health",
        .readiness = "/health answers 200 once the model serves",
        // vllm/entrypoints/serve/instrumentator/health.py (vLLM 0.11): /health asks the engine
        // client whether its core is alive, 503 once it is dead; no generation, no wait.
        .health_answer = std::chrono::seconds{0},
        .health_answer_variable = "",
        .mem_fraction = {"--gpu-memory-utilization", "", vllm_gpu_memory_utilization, 0.92},
        .max_requests = {"--max-num-seqs", "", vllm_max_num_seqs, 1024},
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
        .speculative_methods = kVllmSpeculative,
        .dp_gpus = DpGpus::replicas,
        // Its experts span the tp x dp ranks of the whole group.
        .ep_rule = EpRule::one_or_tp_times_dp,
        .mig = MigSupport::none,
        .mig_source = "vLLM reads each CUDA_VISIBLE_DEVICES entry as an integer and fails on a MIG "
                      "UUID: vllm/platforms/interface.py device_id_to_physical_device_id in "
                      "0.20.1, vLLM #6551, #41848; no MIG support planned, vLLM #17047",
        .progress = kVllmProgress,
        .oom = kVllmOom,
        .not_oom = {},
        .config_errors = kVllmConfigErrors,
        .multi_node_flags = &kVllmMultiNode,
        .liveness = kVllmLiveness,
        .drain = kVllmDrain,
        // check_enough_kv_cache_memory raises ValueError ("To serve at least one request with
        // the models's max seq len ...") when max_model_len's KV cache exceeds what is left.
        .kv_shortfall = {false,
                         "vLLM refuses to start when one max-length request's KV cache does not "
                         "fit (lower --max-model-len)",
                         "vllm/v1/core/kv_cache_utils.py (check_enough_kv_cache_memory), "
                         "vllm-project/vllm 0.11"},
    },
    EngineRow{
        .kind = EngineKind::trtllm,
        .name = "trtllm",
        .display = "trtllm-serve",
        .launch = Launch::venv_program,
        .program = "trtllm-serve",
        .serve_script = {},
        .pip_dist = "tensorrt-llm",
        .import_module = "tensorrt_llm",
        .argv = ArgvBuilder::trtllm,
        .model = ModelSource::path_or_hub_id,
        .default_port = 8000,
        .health_path = "/health",
        .readiness = "/health answers 200 once the model serves",
        // tensorrt_llm/serve/openai_server.py (4c05a74): /health answers at once, 200 or 503 once
        // the executor is gone.
        .health_answer = std::chrono::seconds{0},
        .health_answer_variable = "",
        // A share of the memory left after the weights, not of the GPU: the supervisor does
        // not step it (nor anything else of trtllm-serve's) down.
        .mem_fraction = {"--kv_cache_free_gpu_memory_fraction", ""},
        .max_requests = {"--max_batch_size", ""},
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
        .speculative_methods = {},
        .dp_gpus = DpGpus::none,
        .ep_rule = EpRule::divides_tp,
        .mig = MigSupport::one_instance,
        .mig_source =
            "TensorRT-LLM picks devices by torch ordinal; no MIG failure reported upstream (2026)",
        .progress = {},
        .oom = {},
        .not_oom = {},
        .config_errors = {},
        .liveness = kTrtllmLiveness,
        .drain = kTrtllmDrain,
    },
    EngineRow{
        .kind = EngineKind::llamacpp,
        .name = "llamacpp",
        .display = "llama-server",
        .launch = Launch::executable,
        .program = "llama-server",
        .serve_script = {},
        .pip_dist = "",
        .import_module = "",
        .argv = ArgvBuilder::flags_only,
        .model = ModelSource::local_file,
        .default_port = 8080,
        .health_path = "/health",
        .readiness = "/health answers 503 while the model loads and 200 once it serves",
        // tools/server/server.cpp (00dc805): /health answers from the HTTP thread at once.
        .health_answer = std::chrono::seconds{0},
        .health_answer_variable = "",
        .mem_fraction = {},
        // Both sized by llama-server itself unless engine.args sets them: stepped down only then.
        .max_requests = {"--parallel", "-np"},
        .cuda_graph_max_bs = {},
        .context = {"--ctx-size", "-c"},
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
        .speculative_methods = {},
        .dp_gpus = DpGpus::none,
        .ep_rule = EpRule::any,
        .mig = MigSupport::one_instance,
        .mig_source =
            "llama.cpp enumerates CUDA devices itself (ggml-cuda); one MIG instance is one device",
        .progress = kLlamacppProgress,
        .oom = kLlamacppOom,
        .not_oom = {},
        .config_errors = {},
        .liveness = kLlamacppLiveness,
        .drain = kPlainSigterm,
    },
    EngineRow{
        .kind = EngineKind::command,
        .name = "command",
        .display = "command",
        .launch = Launch::argv,
        .program = "",
        .serve_script = {},
        .pip_dist = "",
        .import_module = "",
        .argv = ArgvBuilder::command,
        .model = ModelSource::in_argv,
        .default_port = 8000,
        .health_path = "/health",
        .readiness = "server.health_path must answer 200 once it serves",
        .health_answer = std::chrono::seconds{0},
        .health_answer_variable = "",
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
        .speculative_methods = {},
        .dp_gpus = DpGpus::none,
        .ep_rule = EpRule::any,
        .mig = MigSupport::one_instance,
        .mig_source = "an unknown program: only CUDA limit of one MIG instance applies",
        .progress = {},
        .oom = {},
        .not_oom = {},
        .config_errors = {},
        .liveness = kCommandLiveness,
        .drain = kPlainSigterm,
    },
};

}  // namespace

std::optional<KnobDefault> knob_default(const EngineKnob& knob, const GpuContext& gpus) {
  if (knob.flag.empty() || !knob.engine_default) return std::nullopt;
  return knob.engine_default(gpus);
}

const SpeculativeMethod* find_speculative_method(const EngineRow& row, std::string_view name) {
  auto lower = [](unsigned char c) { return std::tolower(c); };
  for (const auto& method : row.speculative_methods)
    if (std::ranges::equal(method.name, name, {}, lower, lower)) return &method;
  return nullptr;
}

std::span<const FlagVersions> flag_versions() {
  return kFlagVersions;
}

const FlagVersions* find_flag_versions(EngineKind kind, std::string_view flag) {
  for (const auto& row : kFlagVersions)
    if (row.kind == kind && row.flag == flag) return &row;
  return nullptr;
}

FlagSpelling spell_flag(EngineKind kind, std::string_view flag,
                        const std::optional<std::string>& version) {
  const FlagVersions* row = find_flag_versions(kind, flag);
  if (!row) return {flag, "", !version};
  auto installed = version ? parse_version(*version) : std::nullopt;
  if (!installed) return {row->before.empty() ? row->flag : row->before, row->since, true};
  auto since = parse_version(row->since);
  if (since && *installed < *since) return {row->before, row->since, false};
  return {row->flag, row->since, false};
}

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

std::string_view liveness_mode_name(LivenessMode mode) {
  switch (mode) {
    case LivenessMode::generate:
      return "generate";
    case LivenessMode::metrics:
      return "metrics";
    case LivenessMode::health:
      return "health";
    case LivenessMode::off:
      return "off";
  }
  return "health";
}

std::optional<LivenessMode> parse_liveness_mode(std::string_view name) {
  for (auto mode :
       {LivenessMode::generate, LivenessMode::metrics, LivenessMode::health, LivenessMode::off})
    if (liveness_mode_name(mode) == name) return mode;
  return std::nullopt;
}

std::string_view metrics_format_name(MetricsFormat format) {
  return format == MetricsFormat::iteration_stats ? "iteration-stats" : "prometheus";
}

std::optional<MetricsFormat> parse_metrics_format(std::string_view name) {
  for (auto format : {MetricsFormat::prometheus, MetricsFormat::iteration_stats})
    if (metrics_format_name(format) == name) return format;
  return std::nullopt;
}

std::vector<std::string> liveness_mode_names() {
  return {"generate", "metrics", "health", "off"};
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
