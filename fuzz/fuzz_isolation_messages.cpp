// What an isolated plugin's helper process sends the trainer: the framing
// (isolation::Channel over a socket) and every message the trainer reads
// (Created, Done with the control flags or a state text, notices, requests).
// The helper runs a plugin the trainer does not trust, so any bytes must end
// in a message or a clean protocol error, never in a crash or a read past a
// frame.
#include "isolation/isolation_protocol.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace iso = trainhook::detail::isolation;

namespace {

void read_one(iso::Msg type, const iso::Channel& channel) {
  switch (type) {
    case iso::Msg::Created: {
      const iso::CreatedReply c = iso::read_created(channel.payload());
      // The trainer never believes an observe-only bit outside the plugin's
      // mask, nor one for the two events it always waits for; a side-by-side
      // bit only for an event it waits for.
      if ((c.observe_only & ~c.event_mask) != 0 || (c.event_mask & ~TH_EVENT_MASK_ALL) != 0 ||
          (c.observe_only & (TH_EVENT_BIT(TH_EVENT_TRAIN_END) | TH_EVENT_BIT(TH_EVENT_EXCEPTION))) != 0 ||
          (c.side_by_side & ~(c.event_mask & ~c.observe_only)) != 0)
        __builtin_trap();
      break;
    }
    case iso::Msg::Done: {
      // As an event's answer (control flags follow), then as save_state's
      // (a flag and the state's JSON text follow).
      iso::Reader as_event = channel.payload();
      (void)iso::read_done(as_event);
      th_control control{};
      as_event.raw(&control, sizeof control);
      iso::Reader as_state = channel.payload();
      (void)iso::read_done(as_state);
      if (as_state.u8() != 0) (void)nlohmann::json::parse(as_state.str());
      break;
    }
    default: {
      const iso::RunnerMessage m = iso::read_runner_message(type, channel.payload());
      if (m.capacity > iso::kMaxLearningRates) __builtin_trap();
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return 0;
  // The input may not fit the socket's buffer: write what fits, read what
  // arrived, until the writer is closed and everything has been read.
  ::fcntl(fds[1], F_SETFL, O_NONBLOCK);
  iso::Channel channel(fds[0]);
  size_t done = 0;
  bool writing = true;
  for (;;) {
    if (writing) {
      const ssize_t n = size > done ? ::write(fds[1], data + done, size - done) : 0;
      if (n > 0) done += static_cast<size_t>(n);
      if (done == size || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        ::close(fds[1]);
        writing = false;
      }
    }
    iso::Channel::Result r;
    try {
      r = channel.receive_ready();
    } catch (const std::exception&) {  // a frame over kMaxFrameBytes: the trainer kills the helper
      break;
    }
    if (r == iso::Channel::Result::closed) break;
    if (r != iso::Channel::Result::message) continue;  // more bytes to come
    try {
      read_one(channel.type(), channel);
    } catch (const std::exception&) {  // a protocol error: the trainer kills the helper
    }
  }
  ::close(fds[0]);
  return 0;
}
