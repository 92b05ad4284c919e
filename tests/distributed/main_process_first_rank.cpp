// One rank of the main_process_first test (main_process_first.sh starts two):
// joins the group from the launcher's environment, runs a 300 ms block under
// MainProcessFirst and appends "<rank> start|end <ns since epoch>" to a file.
// usage: main_process_first_rank <file> local|global ok|fail
//   fail: rank 0's block throws after its start line.
#include <trainhook/distributed/main_process_first.hpp>
#include <trainhook/distributed/process_group.hpp>

#include <chrono>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

void stamp(const std::string& file, int rank, const char* what) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  std::ofstream(file, std::ios::app) << rank << " " << what << " " << ns << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc != 4) throw std::invalid_argument("usage: main_process_first_rank <file> local|global ok|fail");
    const std::string file = argv[1];
    const bool local = std::string(argv[2]) == "local";
    const bool fail = std::string(argv[3]) == "fail";
    using namespace trainhook::distributed;
    const auto env = read_launch_env();
    auto group = ProcessGroup::create(env, trainhook::DdpBackend::gloo, std::chrono::seconds(60));
    {
      MainProcessFirst guard(group.get(), MainProcessFirstOptions().set_local(local).set_desc("test data"));
      stamp(file, group->rank(), "start");
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      if (fail && group->rank() == 0) throw std::runtime_error("rank 0 could not prepare the test data");
      stamp(file, group->rank(), "end");
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
