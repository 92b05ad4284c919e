#include <trainhook/common/requeue_signal.hpp>

#include <signal.h>
#include <algorithm>
#include <cctype>

namespace trainhook {
namespace {

struct Named {
  const char* name;
  int sig;
};
constexpr Named kSignals[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2},     {"HUP", SIGHUP},
                              {"ALRM", SIGALRM}, {"URG", SIGURG},       {"XCPU", SIGXCPU},
                              {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF}};

}  // namespace

const char* requeue_signal_choices() noexcept {
  return "USR1, USR2, HUP, ALRM, URG, XCPU, XFSZ, VTALRM, PROF (with or without SIG), or none";
}

int requeue_signal_number(const std::string& name) {
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper == "NONE") return 0;
  if (upper.rfind("SIG", 0) == 0) upper = upper.substr(3);
  for (const auto& s : kSignals)
    if (upper == s.name) return s.sig;
  return -1;
}

const char* requeue_signal_name(int sig) noexcept {
  for (const auto& s : kSignals)
    if (s.sig == sig) return s.name;
  return "";
}

}  // namespace trainhook
