# Fails when the firmware image ELF has a div/divu/rem/remu instruction: the controller implements
# RV32I + Zmmul only (an M-extension divide would trap). Run by fpga/fw/CMakeLists.txt.
execute_process(COMMAND ${OBJDUMP} -d ${ELF} OUTPUT_VARIABLE _dis RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "nodiv: ${OBJDUMP} -d ${ELF} failed")
endif()
string(REGEX MATCH "[^\n]*[ \t](div|divu|rem|remu)[ \t][^\n]*" _hit "${_dis}")
if(_hit)
  message(FATAL_ERROR "firmware: a divide instruction (the core has no divider; fpga/fw/fw.c "
                      "divides in software, umod): ${_hit}")
endif()
