# trainhook_warnings(<target>): the project's warning set; -Werror with TRAINHOOK_WERROR.
function(trainhook_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow=local
    $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor>)
  if(TRAINHOOK_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
