// ddp_weights_diff A.pt B.pt TOLERANCE: compares two model weight files written
// by the trainer (torch::serialize archives, submodules nested) tensor by
// tensor. Prints the largest absolute difference; exits 0 when every tensor of
// A is in B with the same shape and the difference is <= TOLERANCE, 1 otherwise.
#include <torch/serialize.h>
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

int compare(torch::serialize::InputArchive& a, torch::serialize::InputArchive& b, const std::string& prefix,
            double& worst, int& tensors) {
  int problems = 0;
  for (const auto& key : a.keys()) {
    torch::Tensor ta, tb;
    if (a.try_read(key, ta)) {
      if (!b.try_read(key, tb)) {
        std::printf("%s%s: missing from the second file\n", prefix.c_str(), key.c_str());
        ++problems;
        continue;
      }
      if (ta.sizes() != tb.sizes()) {
        std::printf("%s%s: shapes differ\n", prefix.c_str(), key.c_str());
        ++problems;
        continue;
      }
      const double d =
          ta.numel() ? (ta.to(torch::kDouble) - tb.to(torch::kDouble)).abs().max().item<double>() : 0;
      worst = std::max(worst, d);
      ++tensors;
      continue;
    }
    torch::serialize::InputArchive sa, sb;
    if (a.try_read(key, sa)) {
      if (!b.try_read(key, sb)) {
        std::printf("%s%s: submodule missing from the second file\n", prefix.c_str(), key.c_str());
        ++problems;
        continue;
      }
      problems += compare(sa, sb, prefix + key + ".", worst, tensors);
    }
  }
  return problems;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: ddp_weights_diff A.pt B.pt TOLERANCE\n");
    return 2;
  }
  torch::serialize::InputArchive a, b;
  a.load_from(argv[1]);
  b.load_from(argv[2]);
  double worst = 0;
  int tensors = 0;
  const int problems = compare(a, b, "", worst, tensors);
  const double tol = std::atof(argv[3]);
  std::printf("tensors %d, max abs difference %.3g (tolerance %.3g)\n", tensors, worst, tol);
  return problems == 0 && tensors > 0 && worst <= tol ? 0 : 1;
}
