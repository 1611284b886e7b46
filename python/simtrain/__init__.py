"""sim from Python: the C library (libsim, sim-api.h) through ctypes.

    import simtrain
    r = simtrain.estimate(topology="dgx8x4", tp=8, pp=4, dp=2)
    r["time"]["step_s"]          # the step sim prints, the same number

Every answer is the JSON document the command line writes for the same
inputs (docs/schema/sim-result-1.schema.json for estimate, sim-runs-2 for
compare), as plain dicts and lists.  A Session loads a cluster and a model
once for many plans; estimate() and compare() keep one Session per
cluster and model.  Errors raise SimError with sim's own one-line message.

The library is found by, in order: $SIM_LIBRARY (a path); libsim.so.1 on
the loader's path; pkg-config's libdir for sim (meson install writes its
sim.pc); the build/ folder of the checkout this package sits in.
"""
import ctypes
import ctypes.util
import json
import os
import subprocess
import threading
from typing import Dict, Iterable, List, Literal, Optional, Union

__all__ = ["SimError", "Session", "estimate", "compare", "sweep", "plan_string", "to_dataframe", "API_VERSION"]

#: the C interface this binding speaks (sim-api.h SIM_API_VERSION)
API_VERSION = 1


class SimError(Exception):
    """what sim refused or could not do, in its own words (one line)"""


def _candidates():
    env = os.environ.get("SIM_LIBRARY")
    if env:
        yield env
        return
    yield "libsim.so.1"
    found = ctypes.util.find_library("sim")
    if found:
        yield found
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "sim"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
        if libdir:
            yield os.path.join(libdir, "libsim.so.1")
    except (OSError, subprocess.SubprocessError):
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "..", "..", "build", "sim", "libsim.so.1")


_lib = None
_lib_lock = threading.Lock()


def _library():
    global _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                tried.append(path)
                continue
            lib.sim_api_version.restype = ctypes.c_int
            lib.sim_api_session_new.restype = ctypes.c_void_p
            lib.sim_api_session_new.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                                                ctypes.POINTER(ctypes.c_void_p)]
            lib.sim_api_session_free.argtypes = [ctypes.c_void_p]
            lib.sim_api_estimate.restype = ctypes.c_void_p
            lib.sim_api_estimate.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
            lib.sim_api_compare.restype = ctypes.c_void_p
            lib.sim_api_compare.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                            ctypes.POINTER(ctypes.c_void_p)]
            lib.sim_api_sweep.restype = ctypes.c_void_p
            lib.sim_api_sweep.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
            lib.sim_api_free.argtypes = [ctypes.c_void_p]
            if lib.sim_api_version() != API_VERSION:
                raise SimError("%s speaks sim-api version %d; this binding speaks %d"
                               % (path, lib.sim_api_version(), API_VERSION))
            _lib = lib
            return lib
        raise SimError("libsim not found (tried %s): build sim (meson compile -C build) and install it "
                       "(meson install -C build), or set SIM_LIBRARY to libsim.so.1" % ", ".join(tried))


def _take(lib, pointer, error):
    """the text the library returned (freed), or SimError with its message"""
    if not pointer:
        message = ctypes.string_at(error.value).decode() if error.value else "sim failed"
        if error.value:
            lib.sim_api_free(error.value)
        raise SimError(message)
    try:
        return ctypes.string_at(pointer).decode()
    finally:
        lib.sim_api_free(pointer)


Schedule = Literal["gpipe", "1f1b", "interleaved", "zb-h1", "zb-v", "dualpipe-v", "dualpipe"]
MoeDispatcher = Literal["alltoall", "deepep"]
Recompute = Literal["none", "selective", "full"]
Framework = Literal["megatron", "fsdp", "torchtitan"]
AttentionKernel = Literal["flash", "triton", "cudnn", "flash2"]
Fp8 = Literal["off", "hybrid", "e4m3"]
Fp8Recipe = Literal["delayed", "current", "mxfp8", "blockwise", "tensorwise"]
Fp4 = Literal["off", "e2m1"]
Recipe = Literal["bf16-adam", "bf16-adam-fp32-accum", "fp32-adam", "bf16-adam8bit", "bf16-sgd",
                 "bf16-adam-bf16-states"]
CudaGraphImpl = Literal["none", "transformer_engine", "local"]

#: every plan option of sim (its flags without "--", "-" as "_"), in sim --help's order
PLAN_OPTIONS = (
    "tp", "cp", "pp", "dp", "ep", "etp", "moe_imbalance", "moe_expert_capacity_factor",
    "moe_pad_expert_input_to_capacity", "overlap_moe_expert_parallel_comm", "moe_fused_grouped_mlp",
    "moe_dispatcher",
    "micro_batch",
    "global_batch", "seq_len", "schedule", "virtual_stages", "recompute", "recompute_modules",
    "recompute_method", "recompute_num_layers",
    "sequence_parallel", "flash_attention", "zero", "recipe", "order", "lora_rank", "lora_targets", "qlora",
    "context_reserve", "fragmentation", "overlap_grad_reduce", "grad_reduce_in_fp32", "framework", "tp_comm_overlap", "torch_compile",
    "attention_kernel", "overlap_param_gather", "fp8", "fp8_params", "fp8_recipe", "fp8_expert_act", "fp8_attention",
    "tp_only_amax_red", "fp4", "fp4_recipe", "layers_per_virtual_stage", "first_stage_layers",
    "last_stage_layers", "pipeline_model_parallel_layout", "mtp_num_layers", "cpu_offloading_num_layers",
    "cuda_graph_impl", "cuda_graph_scope", "gpu_variation", "slow_gpu", "slow_node", "slow_link",
    "account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split",
)


def plan_string(plan: Union[str, Dict[str, object], None] = None, **flags) -> str:
    """a plan as sim's plan string: "tp=8,pp=4,dp=2"; plan may already be
    one, or a dict of options; flags are options by their Python names
    (micro_batch=2, sequence_parallel=True)"""
    items = []
    if isinstance(plan, str):
        if plan:
            items.append(plan)
    elif plan is not None:
        flags = {**plan, **flags}
    for key, value in flags.items():
        if value is None:
            continue
        name = key.replace("_", "-")
        if key.replace("-", "_") not in PLAN_OPTIONS:
            raise SimError("unknown plan option '%s'" % key)
        if isinstance(value, bool):
            value = "true" if value else "false"
        text = str(value)
        if "," in text:
            raise SimError("--%s: a plan value cannot hold a comma, got '%s'" % (name, text))
        items.append("%s=%s" % (name, text))
    return ",".join(items)


class Session:
    """a cluster and a model loaded once: topology a cluster file or a name
    in topologies/, model a model file, a name in models/ or a Hugging Face
    config.json (None: sim's default, llama3-70b), nodes 0 the file's node
    count, gpus 0 whole nodes.  Any number of threads may call one
    session's methods at once."""

    def __init__(self, topology: str, model: Optional[str] = None, nodes: int = 0, gpus: int = 0):
        self._lib = _library()
        error = ctypes.c_void_p()
        self._session = self._lib.sim_api_session_new(topology.encode(), model.encode() if model else None,
                                                      int(nodes), int(gpus), ctypes.byref(error))
        if not self._session:
            _take(self._lib, None, error)

    def close(self) -> None:
        if getattr(self, "_session", None):
            self._lib.sim_api_session_free(self._session)
            self._session = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def estimate(self, plan: Union[str, Dict[str, object], None] = None, **flags) -> dict:
        """one plan, as `sim --json -`: the sim-result/1 document"""
        if not self._session:
            raise SimError("the session is closed")
        error = ctypes.c_void_p()
        out = self._lib.sim_api_estimate(self._session, plan_string(plan, **flags).encode(), ctypes.byref(error))
        return json.loads(_take(self._lib, out, error))

    def compare(self, plans: Iterable[Union[str, Dict[str, object]]]) -> dict:
        """plans side by side, as `sim compare --json -`: the sim-runs/2
        document, its runs ranked by tokens/s among those that fit"""
        if not self._session:
            raise SimError("the session is closed")
        texts = [plan_string(p).encode() for p in plans]
        array = (ctypes.c_char_p * len(texts))(*texts)
        error = ctypes.c_void_p()
        out = self._lib.sim_api_compare(self._session, array, len(texts), ctypes.byref(error))
        return json.loads(_take(self._lib, out, error))


def sweep_options(**options) -> str:
    """sim sweep's options as the C API takes them: top=5, global_batch=64,
    tp=[1, 2, 4] -> 'top=5,global-batch=64,tp=1/2/4'"""
    allowed = ("top", "all", "global_batch", "seq_len", "gpu_variation", "fp8", "fp4", "tp", "pp", "cp", "ep",
               "etp", "schedule", "min_headroom", "moe_imbalance", "moe_expert_capacity_factor",
               "moe_pad_expert_input_to_capacity")
    items = []
    for key, value in options.items():
        if value is None:
            continue
        if key not in allowed:
            raise SimError("sweep: unknown option '%s' (%s)" % (key, ", ".join(allowed)))
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            value = "/".join(str(v) for v in value)
        items.append("%s=%s" % (key.replace("_", "-"), value))
    return ",".join(items)


def _sweep(self, top: Optional[int] = None, all: Optional[bool] = None, global_batch: Optional[int] = None,
           seq_len: Optional[int] = None, gpu_variation: Optional[Union[float, str]] = None,
           fp8: Optional[Literal["off", "hybrid", "e4m3", "both"]] = None,
           fp4: Optional[Literal["off", "e2m1", "both"]] = None, tp: Optional[List[int]] = None,
           pp: Optional[List[int]] = None, cp: Optional[List[int]] = None, ep: Optional[List[int]] = None,
           etp: Optional[List[int]] = None, schedule: Optional[List[Schedule]] = None,
           min_headroom: Optional[Union[str, float]] = None, moe_imbalance: Optional[float] = None,
           moe_expert_capacity_factor: Optional[float] = None,
           moe_pad_expert_input_to_capacity: Optional[bool] = None) -> dict:
    """the session's layouts ranked, as `sim sweep --json -`: the
    sim-sweep/3 document, its rows in the table's order (rank 1 first);
    the moe_ options route every layout's tokens as sim's flags do"""
    if not self._session:
        raise SimError("the session is closed")
    text = sweep_options(top=top, all=all, global_batch=global_batch, seq_len=seq_len,
                         gpu_variation=gpu_variation, fp8=fp8, fp4=fp4, tp=tp, pp=pp, cp=cp, ep=ep, etp=etp,
                         schedule=schedule, min_headroom=min_headroom, moe_imbalance=moe_imbalance,
                         moe_expert_capacity_factor=moe_expert_capacity_factor,
                         moe_pad_expert_input_to_capacity=moe_pad_expert_input_to_capacity)
    error = ctypes.c_void_p()
    out = self._lib.sim_api_sweep(self._session, text.encode(), ctypes.byref(error))
    return json.loads(_take(self._lib, out, error))


Session.sweep = _sweep

_sessions: Dict[tuple, Session] = {}
_sessions_lock = threading.Lock()


def _session(topology, model, nodes, gpus) -> Session:
    key = (topology, model, nodes, gpus)
    with _sessions_lock:
        s = _sessions.get(key)
        if s is None:
            s = _sessions[key] = Session(topology, model, nodes, gpus)
        return s


def estimate(topology: str, *, model: Optional[str] = None, nodes: int = 0, gpus: int = 0,
             plan: Union[str, Dict[str, object], None] = None,
             tp: Optional[int] = None, cp: Optional[int] = None, pp: Optional[int] = None,
             dp: Optional[int] = None, ep: Optional[int] = None, etp: Optional[int] = None,
             moe_imbalance: Optional[float] = None, moe_expert_capacity_factor: Optional[float] = None,
             moe_pad_expert_input_to_capacity: Optional[bool] = None,
             overlap_moe_expert_parallel_comm: Optional[bool] = None,
             moe_fused_grouped_mlp: Optional[bool] = None,
             moe_dispatcher: Optional[MoeDispatcher] = None, micro_batch: Optional[int] = None, global_batch: Optional[int] = None,
             seq_len: Optional[int] = None, schedule: Optional[Schedule] = None,
             virtual_stages: Optional[int] = None, recompute: Optional[Recompute] = None,
             recompute_modules: Optional[str] = None, recompute_method: Optional[str] = None,
             recompute_num_layers: Optional[int] = None, sequence_parallel: Optional[bool] = None,
             flash_attention: Optional[bool] = None, zero: Optional[int] = None,
             recipe: Optional[Recipe] = None, order: Optional[str] = None, lora_rank: Optional[int] = None,
             lora_targets: Optional[str] = None, qlora: Optional[bool] = None,
             context_reserve: Optional[Union[str, int]] = None, fragmentation: Optional[Union[str, float]] = None,
             overlap_grad_reduce: Optional[bool] = None, grad_reduce_in_fp32: Optional[bool] = None,
             framework: Optional[Framework] = None,
             tp_comm_overlap: Optional[bool] = None, torch_compile: Optional[bool] = None,
             attention_kernel: Optional[AttentionKernel] = None, overlap_param_gather: Optional[bool] = None,
             fp8: Optional[Fp8] = None, fp8_params: Optional[bool] = None, fp8_recipe: Optional[Fp8Recipe] = None,
             fp8_expert_act: Optional[bool] = None, fp8_attention: Optional[bool] = None, tp_only_amax_red: Optional[bool] = None,
             fp4: Optional[Fp4] = None, fp4_recipe: Optional[Literal["nvfp4"]] = None,
             layers_per_virtual_stage: Optional[int] = None, first_stage_layers: Optional[int] = None,
             last_stage_layers: Optional[int] = None, pipeline_model_parallel_layout: Optional[str] = None,
             mtp_num_layers: Optional[Union[int, str]] = None, cpu_offloading_num_layers: Optional[Union[int, str]] = None,
             cuda_graph_impl: Optional[CudaGraphImpl] = None, cuda_graph_scope: Optional[str] = None,
             gpu_variation: Optional[Union[float, str]] = None, slow_gpu: Optional[str] = None,
             slow_node: Optional[str] = None, slow_link: Optional[str] = None,
             account_for_embedding_in_pipeline_split: Optional[bool] = None,
             account_for_loss_in_pipeline_split: Optional[bool] = None) -> dict:
    """one plan on a cluster, as `sim --topology T --model M [flags] --json -`:
    the sim-result/1 document (time.step_s, memory.fits, ...).  Each
    keyword is sim's flag of the same name ("-" written "_")."""
    flags = {k: v for k, v in locals().items() if k in PLAN_OPTIONS and v is not None}
    return _session(topology, model, nodes, gpus).estimate(plan, **flags)


def compare(topology: str, plans: Iterable[Union[str, Dict[str, object]]], *, model: Optional[str] = None,
            nodes: int = 0, gpus: int = 0) -> dict:
    """plans side by side, as `sim compare --topology T --plan P ... --json -`:
    the sim-runs/2 document; each plan a plan string or a dict of options"""
    return _session(topology, model, nodes, gpus).compare(plans)


def sweep(topology: str, *, model: Optional[str] = None, nodes: int = 0, gpus: int = 0, **options) -> dict:
    """the layouts of a job ranked, as `sim sweep --topology T --model M
    [options] --json -`: the sim-sweep/3 document; options as Session.sweep
    (top, all, global_batch, seq_len, gpu_variation, fp8, fp4, tp, pp, cp,
    ep, etp, schedule as lists, min_headroom)"""
    return _session(topology, model, nodes, gpus).sweep(**options)


def to_dataframe(result: dict):
    """the runs of a compare() result (or the rows of a sweep document) as a
    pandas DataFrame, one row each with its plan's fields flattened; pandas
    must be installed"""
    import pandas  # optional: pip install pandas
    rows = result.get("runs", result.get("rows", []))
    return pandas.json_normalize(rows)
