"""The model XML of a published run, written from its row's columns (the
columns of tests/validation/data/training_calibration.csv)."""
import os

# what each architecture a row id names is built of: mlp, norm, position,
# tied embeddings, bias
ARCHITECTURES = {
    # Llama: SwiGLU, RMSNorm, RoPE, no bias
    "llama": ("swiglu", "rmsnorm", "rope", "false", "false"),
    # GPT-3, MT-NLG and Megatron's papers' models: learned positions, biases
    "gpt": ("gelu", "layernorm", "learned", "false", "true"),
    # MosaicML's MPT: tied embeddings, no bias
    "mpt": ("gelu", "layernorm", "rope", "true", "false"),
    # Nemotron-4: the two-matrix MLP with LayerNorm and RoPE
    "nemotron": ("gelu", "layernorm", "rope", "false", "false"),
}


def architecture(rid):
    """the ARCHITECTURES key a row id names: mpt for MosaicML's runs, gpt for
    GPT-3, MT-NLG and Megatron's papers (narayanan, korthikanti, megatron),
    nemotron, else llama"""
    if rid.startswith("mosaic"):
        return "mpt"
    if "gpt3" in rid or "mtnlg" in rid or rid.startswith(("narayanan", "korthikanti", "megatron")):
        return "gpt"
    if "nemotron" in rid:
        return "nemotron"
    return "llama"


def model_xml(r, path):
    """write the model of row r to path (named by the file, described as the
    published run): its columns, in the architecture its id names, with
    Nemotron-4's heads and 4 x hidden as the FFN where the row leaves them
    empty"""
    rid = r["row_id"]
    mlp, norm, position, tied, bias = ARCHITECTURES[architecture(rid)]
    heads = r["heads"] or ("48" if "nemotron4_15b" in rid else "96" if "nemotron4_340b" in rid else "")
    attrs = [("layers", r["layers"]), ("hidden", r["hidden"]), ("heads", heads),
             ("kv-heads", r["kv_heads"] or heads), ("ffn-hidden", r["ffn_hidden"] or str(4 * int(r["hidden"]))),
             ("vocab", r["vocab"]), ("seq-len", r["seq_len"]), ("mlp", mlp), ("norm", norm), ("position", position),
             ("tied-embeddings", tied), ("bias", bias), ("dropout", "false")]
    with open(path, "w") as f:
        f.write('<model name="%s" description="published run %s"><transformer %s/></model>\n'
                % (os.path.basename(path)[:-4], rid, " ".join('%s="%s"' % a for a in attrs)))
