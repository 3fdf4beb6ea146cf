// RV32I + Zmmul (the M extension's multiplies, no divide) controller of the `up5k` configuration
// (docs/fpga.md "The board's core"): a byte-serial core built for area, with fixed, simple timing
// that the host-side ISS (fpga/model/mcu_iss.cpp) replays cycle for cycle.
//
// Datapath: an 8-bit adder and logic unit work through an instruction's operands one byte a
// cycle, low byte first (a carry and the compare flags pass from byte to byte). The register
// file is one RAM of 128 bytes (one EBR: a read port and a write port), read one byte a cycle, so
// an instruction that reads one register (immediate ALU ops, loads, jalr; lui, auipc and jal read
// none) takes its four bytes in four cycles, and one that reads two (register ALU ops, branches,
// stores) in eight: rs1's byte, then rs2's. Result bytes are written as they are computed. Shifts
// and multiplies run in a separate unit with its own 34-bit adder (radix-2 Booth, 33 steps;
// shifts one bit a step) loaded with the operands' bytes; its result and load data are written
// back one byte a cycle. No DSP: the board's eight are the MAC array's and the requantization's.
//
// Cycles per instruction (from the cycle the instruction word is at hand to the next one's; the
// ISS's constants): lui, auipc, jal, fence and immediate ALU ops 5; slti(u) 6; jalr 6; register
// ALU ops 9; slt(u) 10; branches 10 (taken or not); loads 5 + the bus wait + 4 (ROM: 11); stores
// 9 + the bus wait; shifts 10 + the amount (immediate) or 14 + the amount (register); mul and
// mulh* 47. div*/rem* are illegal (the firmware divides in software, libgcc). An illegal
// instruction (ecall and ebreak too) stops the core in its second cycle, a misaligned load or
// store when its address is complete: trap_o stays high, trap_pc_o holds its address.
// Instructions come from a ROM port (one-cycle read latency, shared with data loads from the
// ROM); the PC holds only the ROM's word index (jump targets wrap inside the ROM and drop their
// low two bits). Data go over one request/response bus (any latency; a store completes when it is
// accepted).
module nasa_mcu_cpu #(
  parameter logic [31:0] ResetPc  = 32'h4000_0000,
  parameter int unsigned RomWords = 4096,  // ROM size in 32-bit words (a power of two)
  localparam int unsigned RomAW   = $clog2(RomWords)
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             restart_i,   // start again from the reset PC (after a trap)
  // instruction / ROM data port: address in, word out the next cycle
  output logic [RomAW-1:0] rom_addr_o,
  input  logic [31:0]      rom_data_i,
  // data bus: the request is held until bus_done_i (stores: accepted; loads: data valid)
  output logic             bus_req_o,
  output logic             bus_we_o,
  output logic [31:0]      bus_addr_o,   // word aligned
  output logic [31:0]      bus_wdata_o,
  output logic [3:0]       bus_wstrb_o,
  output logic             bus_rom_o,    // the access is a ROM data read (through rom_addr_o)
  input  logic             bus_done_i,
  input  logic [31:0]      bus_rdata_i,
  output logic             trap_o,
  output logic [31:0]      trap_pc_o,
  output logic             retire_o      // pulse: an instruction completed (for traces, tests)
);
  // SRun: the operand bytes; SFin: one more cycle (slt(i)(u)'s low byte written; a branch's or
  // jalr's next word fetched); SMd: the shift/multiply unit; SWb: a load's or the unit's result
  // written back
  typedef enum logic [2:0] {SBoot, SDec, SRun, SFin, SMem, SMd, SWb, STrap} st_e;
  st_e st_q, st_d;

  logic [RomAW-1:0] pc_q;  // word index in the ROM
  logic [31:0] pc_full, ir_q;
  assign pc_full = ResetPc | (32'(pc_q) << 2);
  logic [RomAW-1:0] pc1;
  assign pc1 = pc_q + RomAW'(1);
  logic [1:0] k_q;  // the byte in work (SRun, SWb)
  logic lt_q, ltu_q;  // the last byte's compare (slt(i)(u) in SFin)
  logic ph_q;       // two-register instructions in SRun: 0 rs1's byte is read, 1 rs2's

  // ---------------- decode (of the held instruction) ----------------
  logic [6:0] opc, f7;
  logic [2:0] f3;
  logic [4:0] rd, rs1, rs2;
  assign opc = ir_q[6:0];
  assign rd  = ir_q[11:7];
  assign f3  = ir_q[14:12];
  assign rs1 = ir_q[19:15];
  assign rs2 = ir_q[24:20];
  assign f7  = ir_q[31:25];
  localparam logic [6:0] OpLui = 7'h37, OpAuipc = 7'h17, OpJal = 7'h6F, OpJalr = 7'h67,
                         OpBr = 7'h63, OpLd = 7'h03, OpSt = 7'h23, OpImm = 7'h13, OpReg = 7'h33,
                         OpFence = 7'h0F;
  logic is_md, is_shift, is_slt, legal, two, is_ld, is_st, is_br;
  assign is_md    = (opc == OpReg) && (f7 == 7'h01);
  assign is_shift = (opc == OpReg || opc == OpImm) && !is_md && (f3 == 3'd1 || f3 == 3'd5);
  assign is_slt   = (opc == OpReg || opc == OpImm) && !is_md && (f3 == 3'd2 || f3 == 3'd3);
  assign is_ld    = (opc == OpLd);
  assign is_st    = (opc == OpSt);
  assign is_br    = (opc == OpBr);
  assign two      = (opc == OpReg) || is_br || is_st;  // reads rs2: two bytes a step
  always_comb begin
    unique case (opc)
      OpLui, OpAuipc, OpJal: legal = 1'b1;
      OpJalr:  legal = (f3 == 3'd0);
      OpBr:    legal = (f3 != 3'd2) && (f3 != 3'd3);
      OpLd:    legal = (f3 == 3'd0) || (f3 == 3'd1) || (f3 == 3'd2) || (f3 == 3'd4) ||
                       (f3 == 3'd5);
      OpSt:    legal = (f3 == 3'd0) || (f3 == 3'd1) || (f3 == 3'd2);
      OpImm:   legal = (f3 == 3'd1) ? (f7 == 7'h00) :
                       (f3 == 3'd5) ? (f7 == 7'h00 || f7 == 7'h20) : 1'b1;
      OpReg:   legal = (f7 == 7'h00) || (f7 == 7'h01 && !f3[2]) ||  // (no div/rem: Zmmul)
                       (f7 == 7'h20 && (f3 == 3'd0 || f3 == 3'd5));
      OpFence: legal = 1'b1;
      default: legal = 1'b0;
    endcase
  end

  // ---------------- register file: 32 x 4 bytes in one RAM, a byte a cycle ----------------
  // (no_rw_check: the core never reads the byte it writes in the same cycle; x0 is never
  // written and reads 0 from the RAM's initial contents)
  (* no_rw_check *) logic [7:0] rf_q [128];
  logic [6:0] ra, wa;
  logic [7:0] rf_o, wd;
  logic we;
  initial begin
    for (int i = 0; i < 128; i++) rf_q[i] = '0;
  end
  always_ff @(posedge clk_i) begin
    if (we) rf_q[wa] <= wd;
    rf_o <= rf_q[ra];
  end

  // ---------------- the byte datapath ----------------
  // Operand a: rs1's byte (straight from the RAM when it is the only register read, else held
  // from the cycle before) or the PC's (auipc); b: rs2's byte or the immediate's.
  logic [7:0] a_q, a, b, imm_b8, pc_b8, link_b8, sum, lres, res;
  logic [31:0] imm;
  logic [8:0] sum9;
  logic carry_q, eq_q, sub, last, compute, lt, ltu, zero8;
  assign imm = is_st ? {{20{ir_q[31]}}, ir_q[31:25], ir_q[11:7]} :
               (opc == OpAuipc || opc == OpLui) ? {ir_q[31:12], 12'd0} :
               {{20{ir_q[31]}}, ir_q[31:20]};
  assign imm_b8  = imm[8*k_q +: 8];
  assign pc_b8   = pc_full[8*k_q +: 8];
  logic [31:0] link;
  assign link    = ResetPc | (32'(pc1) << 2);
  assign link_b8 = link[8*k_q +: 8];
  assign a = (opc == OpAuipc) ? pc_b8 : two ? a_q : rf_o;
  assign b = ((opc == OpReg) || is_br) ? rf_o : imm_b8;
  // subtract: sub, slt(i)(u), branches (stores add: b is rs2's byte only for the data)
  assign sub = is_br || is_slt || ((opc == OpReg) && !is_md && (f3 == 3'd0) && f7[5]);
  logic [7:0] b_x;
  logic cin;  // the low byte's carry in: 1 to subtract
  assign b_x  = b ^ {8{sub}};
  assign cin  = (k_q == 2'd0) ? sub : carry_q;
  assign sum9 = {1'b0, a} + {1'b0, b_x} + 9'(cin);
  assign sum  = sum9[7:0];
  always_comb begin
    unique case ({opc == OpLui, (opc == OpReg || opc == OpImm) ? f3 : 3'd4})
      {1'b0, 3'd6}: lres = a | b;
      {1'b0, 3'd7}: lres = a & b;
      {1'b0, 3'd4}: lres = a ^ b;  // (also branches: eq is its zero)
      default:      lres = b;      // lui: the immediate
    endcase
  end
  assign zero8 = (lres == '0);
  // the last byte's compare: signed from the operands' sign bits (b not inverted), else the sum's
  assign ltu = !sum9[8];
  assign lt  = (a[7] != b[7]) ? a[7] : sum[7];
  // the byte written: the sum (add, sub, their immediate forms, auipc), the link (jal, jalr), the
  // logic op (and, or, xor, lui); slt's upper bytes are 0, its low byte is written in SFin
  always_comb begin
    if (opc == OpJal || opc == OpJalr) res = link_b8;
    else if (is_slt) res = '0;
    else if ((opc == OpAuipc) || ((opc == OpReg || opc == OpImm) && f3 == 3'd0)) res = sum;
    else res = lres;
  end
  // SRun computes a byte in every cycle of a one-register instruction, in the second of each
  // pair of a two-register one
  assign compute = (st_q == SRun) && (!two || ph_q);
  assign last    = compute && (k_q == 2'd3);

  // ---------------- shift and multiply unit: one 34-bit adder ----------------
  // mul, mulh, mulhsu, mulhu: radix-2 Booth on 33-bit operands (sign- or zero-extended as the
  //   instruction says; mul's low word is the same either way): the multiplier in md_lo, the
  //   multiplicand in md_b, the partial sum in md_acc; 33 steps, then the 66-bit product is
  //   {md_acc[32:0], md_lo}: mul takes md_lo[31:0], mulh* {md_acc[30:0], md_lo[32]}.
  // sll, srl, sra (and the immediate forms): md_lo shifts one bit a step, shamt steps.
  // Operands arrive a byte a step in SRun; md_b also takes a load's word.
  logic [33:0] md_acc, md_s;
  logic [32:0] md_lo, md_b;
  logic md_q1;          // Booth: the multiplier bit shifted out last
  logic [5:0] md_cnt;
  logic [4:0] md_sh;    // shift amount
  logic md_sub, md_done, md_mulh;
  assign md_sub  = md_lo[0];
  assign md_s    = md_acc + ({md_b[32], md_b} ^ {34{md_sub}}) + 34'(md_sub);
  assign md_done = is_shift ? (md_cnt == {1'b0, md_sh}) : (md_cnt == 6'd33);
  assign md_mulh = is_md && (f3 != 3'd0);
  logic ld_done;  // a load's word is at hand (bus or ROM)
  logic [31:0] ld_word;
  logic rom_ph_q;  // a ROM load's word is at hand
  logic req_rom;
  assign ld_word = req_rom ? rom_data_i : bus_rdata_i;
  assign ld_done = (st_q == SMem) && is_ld && (req_rom ? rom_ph_q : bus_done_i);
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      md_acc <= '0;
      md_lo  <= '0;
      md_b   <= '0;
      md_q1  <= 1'b0;
      md_cnt <= '0;
      md_sh  <= '0;
    end else if (compute) begin
      md_acc <= '0;
      md_q1  <= 1'b0;
      md_cnt <= '0;
      if (k_q == 2'd0) md_sh <= b[4:0];
      md_lo[8*k_q +: 8] <= a;
      md_b[8*k_q +: 8]  <= b;
      // Booth: the multiplier signed for mul, mulh, mulhsu; the multiplicand for mulh. sra: the
      // sign shifts in.
      md_lo[32] <= is_shift ? (f7[5] && f3 == 3'd5 && a[7]) : ((f3 != 3'd3) && a[7]);
      md_b[32]  <= (f3 == 3'd1) && b[7];
    end else if (st_q == SMd) begin
      md_cnt <= md_cnt + 6'd1;
      if (is_shift) begin
        if (!md_done) md_lo <= (f3 == 3'd1) ? {md_lo[31:0], 1'b0} : {md_lo[32], md_lo[32:1]};
      end else if (md_cnt != 6'd33) begin
        logic [33:0] ps;
        ps     = (md_lo[0] != md_q1) ? md_s : md_acc;
        md_q1  <= md_lo[0];
        md_lo  <= {ps[0], md_lo[32:1]};
        md_acc <= {ps[33], ps[33:1]};
      end
    end else if (ld_done) begin
      md_b[31:0] <= ld_word;
    end
  end
  // the byte written back in SWb: a load's (the word's byte at the access offset, then the sign
  // or zero extension) or the unit's result
  logic [31:0] wb_word;
  logic [1:0] wb_idx;
  logic [7:0] wb_b8;
  logic wb_in, sign_q;
  assign wb_word = is_ld ? md_b[31:0] : md_mulh ? {md_acc[30:0], md_lo[32]} : md_lo[31:0];
  assign wb_idx  = k_q + (is_ld ? addr_q[1:0] : 2'd0);
  // (loads: bytes inside the access's size; lw: all four, at offset 0)
  assign wb_in   = !is_ld || (f3[1:0] == 2'd2) || (k_q == 2'd0) || (f3[0] && k_q == 2'd1);
  assign wb_b8   = wb_in ? wb_word[8*wb_idx +: 8] : {8{sign_q && !f3[2]}};

  // ---------------- loads and stores ----------------
  // the address's bytes as the adder makes them (also jalr's target); a store's data bytes
  logic [31:0] addr_q, wdata_q;
  logic misaligned;
  assign req_rom     = (addr_q[31:28] == ResetPc[31:28]);
  assign misaligned  = (f3[1:0] == 2'd1 && addr_q[0]) || (f3[1:0] == 2'd2 && addr_q[1:0] != '0);
  assign bus_req_o   = (st_q == SMem) && !(is_ld && req_rom);
  assign bus_we_o    = is_st;
  assign bus_addr_o  = {addr_q[31:2], 2'b00};
  assign bus_rom_o   = is_ld && req_rom;
  always_comb begin
    unique case (f3[1:0])
      2'd0: begin bus_wdata_o = {4{wdata_q[7:0]}}; bus_wstrb_o = 4'b0001 << addr_q[1:0]; end
      2'd1: begin bus_wdata_o = {2{wdata_q[15:0]}}; bus_wstrb_o = 4'b0011 << addr_q[1:0]; end
      default: begin bus_wdata_o = wdata_q; bus_wstrb_o = 4'b1111; end
    endcase
  end

  // ---------------- sequencing ----------------
  logic [RomAW-1:0] tgt;
  logic [31:0] imm_bj;
  logic take, finish, br_take_q, simple;
  assign imm_bj = (opc == OpJal) ? {{11{ir_q[31]}}, ir_q[31], ir_q[19:12], ir_q[20],
                                    ir_q[30:21], 1'b0}
                                 : {{19{ir_q[31]}}, ir_q[31], ir_q[7], ir_q[30:25],
                                    ir_q[11:8], 1'b0};
  assign tgt    = pc_q + RomAW'(imm_bj >> 2);
  always_comb begin
    unique case (f3)
      3'd0: take = eq_q && zero8;
      3'd1: take = !(eq_q && zero8);
      3'd4: take = lt;
      3'd5: take = !lt;
      3'd6: take = ltu;
      default: take = !ltu;
    endcase
  end
  // instructions that finish with their last byte (the rest go on to another state)
  assign simple = !(is_ld || is_st || is_br || is_md || is_shift || is_slt || opc == OpJalr);
  always_comb begin
    unique case (st_q)
      SRun:    finish = last && simple;
      SFin:    finish = 1'b1;
      SMem:    finish = is_st && bus_done_i;
      SWb:     finish = (k_q == 2'd3);
      default: finish = 1'b0;
    endcase
  end
  // ROM port: the next instruction's word when one finishes (its address never depends on the
  // adder: a taken branch's and jalr's target are fetched in SFin); a ROM load's
  always_comb begin
    rom_addr_o = pc1;
    unique case (st_q)
      SBoot, SDec: rom_addr_o = pc_q;
      SRun:    if (opc == OpJal) rom_addr_o = tgt;
      SFin:    if (is_br && br_take_q) rom_addr_o = tgt;
               else if (opc == OpJalr) rom_addr_o = addr_q[RomAW+1:2];
      SMem:    if (is_ld && !rom_ph_q) rom_addr_o = addr_q[RomAW+1:2];
      default: ;
    endcase
  end
  // the register file's ports
  always_comb begin
    ra = {rs1, k_q + 2'd1};  // one-register steps: rs1's next byte; two-register: rs1's after rs2's
    if (st_q == SDec) ra = {rom_data_i[19:15], 2'd0};
    else if (two && !ph_q) ra = {rs2, k_q};
    we = 1'b0;
    wa = {rd, k_q};
    wd = res;
    unique case (st_q)
      SRun: we = compute && legal && (rd != 5'd0) && !(is_slt && k_q == 2'd0) &&
                 !(is_ld || is_st || is_br || is_md || is_shift || opc == OpFence);
      SFin: begin
        we = is_slt && (rd != 5'd0);
        wa = {rd, 2'd0};
        wd = {7'd0, ir_q[12] ? ltu_q : lt_q};
      end
      SWb: begin
        we = (rd != 5'd0);
        wd = wb_b8;
      end
      default: ;
    endcase
  end
  always_comb begin
    st_d = st_q;
    unique case (st_q)
      SBoot: st_d = SDec;  // the ROM shows the word at ResetPc (rom_addr_o = pc)
      SDec:  st_d = SRun;
      SRun: begin
        if (!legal) st_d = STrap;  // (in the first cycle: nothing is written)
        else if (last) begin
          if ((is_ld || is_st) && misaligned) st_d = STrap;
          else if (is_ld || is_st) st_d = SMem;
          else if (is_md || is_shift) st_d = SMd;
          else if (is_br || is_slt || opc == OpJalr) st_d = SFin;
          else st_d = SDec;
        end
      end
      SMem: if (ld_done) st_d = SWb;
            else if (finish) st_d = SDec;
      SMd:  if (md_done) st_d = SWb;
      SWb, SFin: if (finish) st_d = SDec;
      default: ;
    endcase
    if (restart_i) st_d = SBoot;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q      <= SBoot;
      pc_q      <= '0;
      ir_q      <= '0;
      k_q       <= '0;
      ph_q      <= 1'b0;
      a_q       <= '0;
      carry_q   <= 1'b0;
      eq_q      <= 1'b0;
      lt_q      <= 1'b0;
      ltu_q     <= 1'b0;
      addr_q    <= '0;
      wdata_q   <= '0;
      rom_ph_q  <= 1'b0;
      br_take_q <= 1'b0;
      sign_q    <= 1'b0;
      trap_pc_o <= '0;
    end else begin
      st_q <= st_d;
      if (st_q == SDec) begin
        ir_q    <= rom_data_i;
        k_q     <= '0;
        ph_q    <= 1'b0;
        eq_q    <= 1'b1;
      end
      if (st_q == SRun) begin
        if (two) ph_q <= !ph_q;
        if (two && !ph_q) a_q <= rf_o;
        if (compute) begin
          k_q     <= k_q + 2'd1;
          carry_q <= sum9[8];
          eq_q    <= eq_q && zero8;
          addr_q[8*k_q +: 8]  <= sum;
          wdata_q[8*k_q +: 8] <= rf_o;
          lt_q    <= lt;
          ltu_q   <= ltu;
          if (last) br_take_q <= take;
        end
        if (!legal || (last && (is_ld || is_st) && misaligned)) trap_pc_o <= pc_full;
      end
      if (st_q == SWb) begin
        k_q <= k_q + 2'd1;
        if (wb_in) sign_q <= wb_b8[7];
      end
      if (st_q == SMem) rom_ph_q <= is_ld && req_rom && !rom_ph_q;
      if (finish) pc_q <= rom_addr_o;
      if (st_q == SBoot || restart_i) pc_q <= '0;
    end
  end
  assign trap_o   = (st_q == STrap);
  assign retire_o = finish;
endmodule
