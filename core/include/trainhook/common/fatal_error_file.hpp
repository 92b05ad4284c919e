// torchrun's error file: its agent gives every worker TORCHELASTIC_ERROR_FILE
// and, when the worker fails, prints what the worker wrote there in its
// failure summary (else only "To enable traceback see: ..."). The format is
// torch.distributed.elastic's (errors/error_handler.py, read by
// ProcessFailure): {"message": {"message": M, "extraInfo": {"py_callstack": W,
// "timestamp": "<unix seconds>"}}}; the summary shows py_callstack, so ours
// holds the message and where it happened (program, rank, host, pid).
#pragma once

#include <string>

namespace trainhook {

// The JSON document for `message`, `where` and `timestamp` (seconds).
std::string torchelastic_error_json(const std::string& message, const std::string& where, long long timestamp);

// Writes the error file named by TORCHELASTIC_ERROR_FILE (nothing when unset)
// for a run that ends by `message`; `where` is added to the message's context
// (rank, host, pid are added here). Never throws; a file that cannot be
// written is reported on stderr. Returns whether a file was written.
bool write_torchelastic_error_file(const std::string& message, const std::string& where = "trainhook") noexcept;

// Reads TORCHELASTIC_ERROR_FILE once (call at start, outside any signal
// handler), so that write_torchelastic_error_file_signal_safe can write it.
void prepare_torchelastic_error_file() noexcept;

// The same file from a signal handler: open/write/close only, no allocation;
// the message is cut at about 3.8 KiB. Does nothing unless prepared with a path.
void write_torchelastic_error_file_signal_safe(const char* message) noexcept;

}  // namespace trainhook
