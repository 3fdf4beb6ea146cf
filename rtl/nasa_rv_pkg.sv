// RV32I decode shared by the board's controller cores (nasa_mcu_cpu: RV32I + Zmmul, multi-cycle;
// nasa_mcu_cpu_serial: RV32I, bit-serial): opcodes, which words are legal, a branch's outcome,
// a store's byte lanes.
package nasa_rv_pkg;
  localparam logic [6:0] OpLui = 7'h37, OpAuipc = 7'h17, OpJal = 7'h6F, OpJalr = 7'h67,
                         OpBr = 7'h63, OpLd = 7'h03, OpSt = 7'h23, OpImm = 7'h13, OpReg = 7'h33,
                         OpFence = 7'h0F;

  // An instruction the core executes (its opcode, funct3, funct7): RV32I without ecall, ebreak
  // and CSRs; with `mul` also Zmmul's mul, mulh, mulhsu, mulhu (div and rem are illegal either
  // way: the firmware divides in software).
  function automatic logic rv_legal(logic [6:0] opc, logic [2:0] f3, logic [6:0] f7, bit mul);
    unique case (opc)
      OpLui, OpAuipc, OpJal, OpFence: rv_legal = 1'b1;
      OpJalr:  rv_legal = (f3 == 3'd0);
      OpBr:    rv_legal = (f3 != 3'd2) && (f3 != 3'd3);
      OpLd:    rv_legal = (f3 != 3'd3) && (f3 != 3'd6) && (f3 != 3'd7);
      OpSt:    rv_legal = (f3 == 3'd0) || (f3 == 3'd1) || (f3 == 3'd2);
      OpImm:   rv_legal = (f3 == 3'd1) ? (f7 == 7'h00) :
                          (f3 == 3'd5) ? (f7 == 7'h00 || f7 == 7'h20) : 1'b1;
      OpReg:   rv_legal = (f7 == 7'h00) || (mul && f7 == 7'h01 && !f3[2]) ||
                          (f7 == 7'h20 && (f3 == 3'd0 || f3 == 3'd5));
      default: rv_legal = 1'b0;
    endcase
  endfunction

  // A branch's outcome (funct3) from the operands' compare: equal, less (signed), less unsigned.
  function automatic logic br_take(logic [2:0] f3, logic eq, logic lt, logic ltu);
    unique case (f3)
      3'd0: br_take = eq;
      3'd1: br_take = !eq;
      3'd4: br_take = lt;
      3'd5: br_take = !lt;
      3'd6: br_take = ltu;
      default: br_take = !ltu;
    endcase
  endfunction

  // A store's bus word and strobes (size: funct3's low bits: sb, sh, sw): bytes and halves
  // replicated over the word, the strobes at the address's offset `off`. {strobes, data}.
  function automatic logic [35:0] st_lanes(logic [1:0] size, logic [31:0] d, logic [1:0] off);
    unique case (size)
      2'd0: st_lanes = {4'b0001 << off, {4{d[7:0]}}};
      2'd1: st_lanes = {4'b0011 << off, {2{d[15:0]}}};
      default: st_lanes = {4'b1111, d};
    endcase
  endfunction
endpackage
