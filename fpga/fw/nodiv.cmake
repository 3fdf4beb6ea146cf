# Fails when the firmware image ELF has an instruction its core lacks: BANNED, a comma-separated
# list of mnemonics (a divide on either core: the board's controller implements RV32I + Zmmul;
# also a multiply for the bit-serial RV32I core). Run by fpga/fw/CMakeLists.txt.
execute_process(COMMAND ${OBJDUMP} -d ${ELF} OUTPUT_VARIABLE _dis RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "nodiv: ${OBJDUMP} -d ${ELF} failed")
endif()
string(REPLACE "," "|" _alt "${BANNED}")
string(REGEX MATCH "[^\n]*[ \t](${_alt})[ \t][^\n]*" _hit "${_dis}")
if(_hit)
  message(FATAL_ERROR "firmware ${ELF}: an instruction its core lacks (${BANNED}; fpga/fw/fw.c "
                      "divides in software, umod): ${_hit}")
endif()
