"""Checks a trainer_state.json against what Hugging Face's TrainerState does with it.

HF writes json.dumps(dataclasses.asdict(state), indent=2, sort_keys=True) + "\n"
and reads it back with TrainerState(**json.loads(text)). So the file must
 1. be byte-identical to its own re-serialisation the way HF writes it, and
 2. hold exactly the dataclass' fields (an unknown key makes HF's load fail).
When transformers is importable, its real TrainerState.load_from_json is used too.
Usage: hf_trainer_state_check.py FILE...
"""
import dataclasses
import json
import sys
from typing import Any, Dict, List, Optional, Union


@dataclasses.dataclass
class HFTrainerStateFields:  # field names of transformers' TrainerState (v4.45 .. v5)
    epoch: Optional[float] = None
    global_step: int = 0
    max_steps: int = 0
    logging_steps: int = 500
    eval_steps: int = 500
    save_steps: int = 500
    train_batch_size: Optional[int] = None
    num_train_epochs: int = 0
    num_input_tokens_seen: int = 0
    total_flos: float = 0
    log_history: List[Dict[str, float]] = None
    best_metric: Optional[float] = None
    best_global_step: Optional[int] = None
    best_model_checkpoint: Optional[str] = None
    is_local_process_zero: bool = True
    is_world_process_zero: bool = True
    is_hyper_param_search: bool = False
    trial_name: Optional[str] = None
    trial_params: Dict[str, Union[str, float, int, bool]] = None
    stateful_callbacks: List[Any] = None


def check(path: str) -> List[str]:
    errors = []
    with open(path, encoding="utf-8") as f:
        text = f.read()
    data = json.loads(text)
    rewritten = json.dumps(data, indent=2, sort_keys=True) + "\n"
    if rewritten != text:
        for i, (a, b) in enumerate(zip(text.splitlines(), rewritten.splitlines())):
            if a != b:
                errors.append(f"{path}: line {i + 1} differs from HF's serialisation: {a!r} vs {b!r}")
                break
        else:
            errors.append(f"{path}: differs from HF's serialisation (length or final newline)")
    fields = {f.name for f in dataclasses.fields(HFTrainerStateFields)}
    if set(data) != fields:
        errors.append(f"{path}: keys differ from HF's TrainerState: extra {sorted(set(data) - fields)}, "
                      f"missing {sorted(fields - set(data))}")
    else:
        HFTrainerStateFields(**data)
    for name, entry in (data.get("stateful_callbacks") or {}).items():
        if not isinstance(entry, dict) or set(entry) != {"args", "attributes"}:
            errors.append(f"{path}: stateful_callbacks[{name!r}] is not {{'args': ..., 'attributes': ...}}: {entry!r}")
    try:
        from transformers import TrainerState  # optional: the real thing
        TrainerState.load_from_json(path)
    except ImportError:
        pass
    return errors


def main() -> int:
    errors = [e for p in sys.argv[1:] for e in check(p)]
    for e in errors:
        print(e, file=sys.stderr)
    print(f"checked {len(sys.argv) - 1} file(s): {'FAILED' if errors else 'ok'}")
    return 1 if errors or len(sys.argv) < 2 else 0


if __name__ == "__main__":
    sys.exit(main())
