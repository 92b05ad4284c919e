# trainhook_warnings(<target>): the project's warning set; -Werror with TRAINHOOK_WERROR.
function(trainhook_warnings target)
  # -Wshadow=local is GCC's spelling; clang (the fuzz build) has no such option.
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic
    $<$<CXX_COMPILER_ID:GNU>:-Wshadow=local>
    $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor>)
  if(TRAINHOOK_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
