"""A TorchScript language model from Python trains on a token file.

Run with the HF test venv's python (Debian python3-torch 1.13, the version of
libtorch-dev): a decoder-only LM (token and learned position embeddings, one
causal self-attention block, a head) whose forward(input_ids, labels) returns
{"loss", "logits"} is scripted here; trainhook trains it on uint16 train.bin
windows and evaluates on val.bin blocks; the validation loss must fall well
below the uniform loss ln(256) and Python's torch.jit.load must read the result.

usage: torchscript_lm_cli.py <trainhook cli> <work dir>
"""
import array
import glob
import json
import math
import os
import shutil
import subprocess
import sys

import torch

CLI, WORK = sys.argv[1:3]


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


class TinyLM(torch.nn.Module):
    def __init__(self, vocab: int = 256, block: int = 16, width: int = 32):
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, width)
        self.positions = torch.nn.Embedding(block, width)
        self.block = torch.nn.TransformerEncoderLayer(width, 2, 64, dropout=0.0, batch_first=True)
        self.head = torch.nn.Linear(width, vocab)

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor):
        seq = input_ids.size(1)
        x = self.tokens(input_ids) + self.positions(torch.arange(seq, device=input_ids.device))
        mask = torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)
        logits = self.head(self.block(x, src_mask=mask))
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1))
        return {"loss": loss, "logits": logits}


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
torch.manual_seed(0)
torch.jit.save(torch.jit.script(TinyLM()), f"{WORK}/lm.pt")
data = b"".join(open(f, "rb").read() for f in sorted(glob.glob("/usr/share/common-licenses/*"))
                if not os.path.islink(f))[:200000]
cut = len(data) * 9 // 10
array.array("H", list(data[:cut])).tofile(open(f"{WORK}/train.bin", "wb"))
array.array("H", list(data[cut:])).tofile(open(f"{WORK}/val.bin", "wb"))

args = [CLI, "train", "--model_name_or_path", f"{WORK}/lm.pt", "--train_file", f"{WORK}/train.bin",
        "--validation_file", f"{WORK}/val.bin", "--block_size", "16", "--vocab_size", "256", "--max_steps", "150",
        "--per_device_train_batch_size", "32", "--learning_rate", "3e-3", "--do_train", "--do_eval",
        "--save_strategy", "no", "--disable_tqdm", "--output_dir", f"{WORK}/out"]
with open(f"{WORK}/train.log", "w") as log:
    rc = subprocess.call(args, stdout=log, stderr=subprocess.STDOUT)
if rc != 0:
    fail(f"trainhook exited {rc}:\n{open(f'{WORK}/train.log').read()[-3000:]}")
loss = json.load(open(f"{WORK}/out/eval_results.json"))["eval_loss"]
print(f"eval_loss {loss:.4f} (uniform {math.log(256):.4f})")
if not loss < math.log(256) - 1.5:
    fail(f"eval_loss {loss} is not well below the uniform loss {math.log(256)}")
trained = torch.jit.load(f"{WORK}/out/model.pt")
window = torch.tensor([list(data[cut:cut + 17])], dtype=torch.long)
out = trained(window[:, :16], window[:, 1:])
if not abs(out["loss"].item() - loss) < 1.5:
    fail(f"the trained model's loss in Python {out['loss'].item()} is far from eval_loss {loss}")
print("torch.jit.load reads the trained model")
