# trainhook_reuse_torch_pch(<target>)
#
# Lets an in-tree executable reuse libtrainhook's precompiled <torch/torch.h>
# (LibTorch headers cost tens of seconds per translation unit). Reusing a PCH
# needs the library's settings: -fPIC (GCC refuses the PCH under -fPIE) and the
# library's macros (trainhook_EXPORTS, Boost.Program_options).
function(trainhook_reuse_torch_pch target)
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
  target_compile_options(${target} PRIVATE -fPIC)
  target_compile_definitions(${target} PRIVATE trainhook_EXPORTS
    BOOST_ALL_NO_LIB BOOST_PROGRAM_OPTIONS_DYN_LINK)
  target_precompile_headers(${target} REUSE_FROM trainhook)
endfunction()
