// RV32I + Zmmul (the M extension's multiplies, no divide) controller of the `fpga` configuration
// (docs/fpga.md "The board's core"): a multi-cycle core built for area, with fixed, simple timing
// that the host-side ISS (fpga/model/mcu_iss.cpp) replays cycle for cycle. Instructions come from a
// ROM port (one-cycle read latency, shared with data loads from the ROM); the register file is a
// two-read-port RAM written at the end of an instruction. Data go over one request/response bus
// (any latency; a store completes when it is accepted). Cycles per instruction: ALU, jal,
// fence 2; branches and jalr 3 (the compare and the jalr target go into registers, the next
// instruction is fetched a cycle later: no path from the adder to the ROM address or the PC);
// loads and stores 2 + the bus wait (ROM: 2); shifts 3 + the shift amount;
// mul and mulh* 2 + 34. div*/rem* are illegal (the firmware divides in software, libgcc). An
// illegal instruction (ecall and ebreak too) or a misaligned load or store stops the core: trap_o
// stays high, trap_pc_o holds its address.
// Area: one 32-bit adder serves add/sub/compare/branch/address/auipc/jalr; shifts take one bit a
// cycle in the multiply unit's register; one 34-bit adder serves the multiplies (radix-2 Booth,
// 33 steps; no DSP: the board's eight are the MAC array's and the requantization's, docs/fpga.md);
// the PC holds only the ROM's word index (jump targets wrap inside the ROM and drop their low two
// bits).
module nasa_mcu_cpu #(
  parameter logic [31:0] ResetPc  = 32'h4000_0000,
  parameter int unsigned RomWords = 4096,  // ROM size in 32-bit words (a power of two)
  localparam int unsigned RomAW   = $clog2(RomWords)
) (
`include "nasa_mcu_cpu_ports.svh"
);
  typedef enum logic [2:0] {SBoot, SDec, SExe, SMem, SMd, SFetch, SBr, STrap} state_e;
  state_e st_q, st_d;

  logic [RomAW-1:0] pc_q;  // word index in the ROM
  logic [31:0] pc_full, ir_q;
  assign pc_full = ResetPc | (32'(pc_q) << 2);
  logic [31:0] rs1_v, rs2_v;

  // ---------------- register file: 32 x 32, two read ports (two copies), registered reads -----
  // (the next instruction's operands are read in its SDec, after the write: never the register
  // being written)
  logic [4:0] ra1, ra2, wa;
  logic [31:0] rd1_q, rd2_q, wd;
  logic we;
  nasa_mcu_rf #(.Words(32), .Width(32)) u_rf1 (
    .clk_i(clk_i), .we_i(we), .waddr_i(wa), .wdata_i(wd), .raddr_i(ra1), .rdata_o(rd1_q)
  );
  nasa_mcu_rf #(.Words(32), .Width(32)) u_rf2 (
    .clk_i(clk_i), .we_i(we), .waddr_i(wa), .wdata_i(wd), .raddr_i(ra2), .rdata_o(rd2_q)
  );

  // ---------------- decode ----------------
  // Everything decodes the held instruction ir_q; in SDec only the register file's read
  // addresses come from the ROM word (no path from the ROM through the execute logic).
  logic [31:0] ir;
  assign ir = ir_q;
`include "nasa_rv_fields.svh"
  logic [31:0] imm_b, imm_j;
  assign imm_b = {{19{ir[31]}}, ir[31], ir[7], ir[30:25], ir[11:8], 1'b0};
  assign imm_j = {{11{ir[31]}}, ir[31], ir[19:12], ir[20], ir[30:21], 1'b0};

  logic is_md, is_shift, legal;
  assign is_md    = (opc == OpReg) && (f7 == 7'h01);
  assign is_shift = (opc == OpReg || opc == OpImm) && !is_md && (f3 == 3'd1 || f3 == 3'd5);
  assign legal = nasa_rv_pkg::rv_legal(opc, f3, f7, 1'b1);

  // the adder's operand selects, decoded in SDec from the ROM word into registers (nothing
  // decodes in front of the adder in SExe): subtract (sub, slt(i)/slt(i)u, branches), operand b
  // from rs2 (register ops, branches) or the immediate (stores: S; auipc: U; else I), a = pc
  logic [31:0] rw;  // the word the ROM shows in SDec
  logic [6:0] r_opc;
  logic [2:0] r_f3;
  assign rw    = rom_data_i;
  assign r_opc = rw[6:0];
  assign r_f3  = rw[14:12];
  // and the SExe result: the adder's sum (add/sub/addi/auipc); K, the link address (jal, jalr) or
  // the compare bit (slt(i), slt(i)u); or a logic op of rs1 and operand b (and, or, xor; lui:
  // operand b itself, the immediate; branches: xor, whose zero is eq). Each result bit is then
  // one LUT after the logic op's.
  logic sub_q, opb_rs2_q, auipc_q;
  logic [31:0] imm_q, imm_x_q;  // imm_x_q: the immediate as the adder's b (inverted to subtract)
  typedef enum logic [1:0] {LopAnd, LopOr, LopXor, LopB} lop_e;
  lop_e lop_q;
  logic r_sum_q, r_k_q, r_lt_q, r_ltu_q, r_link_q;
  logic r_alu, r_sub;
  logic [31:0] r_imm;
  assign r_alu = (r_opc == OpReg) || (r_opc == OpImm);
  assign r_sub = (r_opc == OpBr) ||
                 ((r_opc == OpReg || r_opc == OpImm) && (r_f3 == 3'd2 || r_f3 == 3'd3)) ||
                 (r_opc == OpReg && r_f3 == 3'd0 && rw[30]);
  assign r_imm = (r_opc == OpSt) ? {{20{rw[31]}}, rw[31:25], rw[11:7]} :
                 (r_opc == OpAuipc || r_opc == OpLui) ? {rw[31:12], 12'd0} :
                 {{20{rw[31]}}, rw[31:20]};
  always_ff @(posedge clk_i) begin
    if (st_q == SDec) begin
      r_sum_q   <= (r_alu && r_f3 == 3'd0) || (r_opc == OpAuipc);
      r_lt_q    <= r_alu && r_f3 == 3'd2;
      r_ltu_q   <= r_alu && r_f3 == 3'd3;
      r_link_q  <= (r_opc == OpJal) || (r_opc == OpJalr);
      r_k_q     <= (r_opc == OpJal) || (r_opc == OpJalr) || (r_alu && r_f3[2:1] == 2'b01);
      lop_q     <= (r_opc == OpLui) ? LopB : (r_alu && r_f3 == 3'd6) ? LopOr :
                   (r_alu && r_f3 == 3'd7) ? LopAnd : LopXor;
      sub_q     <= r_sub;
      opb_rs2_q <= (r_opc == OpReg) || (r_opc == OpBr);
      auipc_q   <= (r_opc == OpAuipc);
      imm_q     <= r_imm;
      imm_x_q   <= r_imm ^ {32{r_sub}};
    end
  end

  // ---------------- execute: one adder, one shifter ----------------
  assign rs1_v = rd1_q;
  assign rs2_v = rd2_q;
  logic [31:0] add_a, op_b, add_b, alu, sum, lres, kv;
  logic [32:0] sum33;
  logic sub, lt, ltu, eq, take;
  assign op_b  = opb_rs2_q ? rs2_v : imm_q;
  assign add_a = auipc_q ? pc_full : rs1_v;
  assign sub   = sub_q;
  // (one LUT level in front of the carry chain: the register operand, or the registered immediate)
  assign add_b = opb_rs2_q ? (rs2_v ^ {32{sub}}) : imm_x_q;
  assign sum33 = {1'b0, add_a} + {1'b0, add_b} + 33'(sub);
  assign sum   = sum33[31:0];
  assign ltu   = !sum33[32];
  assign lt    = (rs1_v[31] != op_b[31]) ? rs1_v[31] : sum[31];
  always_comb begin
    unique case (lop_q)
      LopAnd:  lres = rs1_v & op_b;
      LopOr:   lres = rs1_v | op_b;
      LopXor:  lres = rs1_v ^ op_b;
      default: lres = op_b;
    endcase
  end
  assign eq = (lres == '0);  // (branches: lop_q is LopXor)
  // (shifts run in the multiply unit, one bit a cycle); the result's selects are registered
  logic [RomAW-1:0] next_pc, pc1, tgt;
  logic [31:0] link;
  assign link = ResetPc | (32'(pc1) << 2);
  // (kv is 0 unless r_k_q: its selects imply it; one of sum, kv, lres is on)
  assign kv  = ({32{r_link_q}} & link) | {31'd0, (r_lt_q && lt) || (r_ltu_q && ltu)};
  assign alu = ({32{r_sum_q}} & sum) | ({32{!r_sum_q && !r_k_q}} & lres) | kv;
  assign take = nasa_rv_pkg::br_take(f3, eq, lt, ltu);

  // ---------------- multiply and shift: one 34-bit adder ----------------
  // mul, mulh, mulhsu, mulhu: radix-2 Booth on 33-bit operands (sign- or zero-extended as the
  //   instruction says; mul's low word is the same either way): the multiplier in md_lo, the
  //   multiplicand in md_b, the partial sum in md_acc; 33 steps, then the 66-bit product is
  //   {md_acc[32:0], md_lo}: mul takes md_lo[31:0], mulh* {md_acc[30:0], md_lo[32]}.
  // sll, srl, sra (and the immediate forms): md_lo shifts one bit a step, shamt steps.
  typedef enum logic [1:0] {MdMul, MdMulh, MdShl, MdShr} md_e;  // (bit 1: a shift)
  md_e md_op;
  logic [33:0] md_acc;
  logic [32:0] md_lo, md_b;
  logic md_q1;          // Booth: the multiplier bit shifted out last
  logic [5:0] md_cnt;
  logic [4:0] md_sh;    // shift amount
  logic [33:0] md_s;
  logic md_sub;
  logic md_done;  // the multiply or shift finishes this cycle
  // Booth adds (01) or subtracts (10) the multiplicand
  assign md_sub = md_lo[0];
  assign md_s   = md_acc + ({md_b[32], md_b} ^ {34{md_sub}}) + 34'(md_sub);  // (one adder)
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      md_op  <= MdMul;
      md_acc <= '0;
      md_lo  <= '0;
      md_b   <= '0;
      md_q1  <= 1'b0;
      md_cnt <= '0;
      md_sh  <= '0;
    end else if (st_q == SExe && (is_md || is_shift)) begin
      md_op  <= is_shift ? ((f3 == 3'd1) ? MdShl : MdShr) : (f3 == 3'd0) ? MdMul : MdMulh;
      md_acc <= '0;
      md_q1  <= 1'b0;
      md_cnt <= '0;
      md_sh  <= op_b[4:0];
      // Booth: the multiplier signed for mul, mulh, mulhsu; the multiplicand for mulh. sra: the
      // sign shifts in.
      md_lo  <= {is_shift ? (f7[5] && f3 == 3'd5 && rs1_v[31]) : ((f3 != 3'd3) && rs1_v[31]),
                 rs1_v};
      md_b   <= {(f3 == 3'd1) && rs2_v[31], rs2_v};
    end else if (st_q == SMd) begin
      md_cnt <= md_cnt + 6'd1;
      unique case (md_op)
        MdShl: if (!md_done) md_lo <= {md_lo[31:0], 1'b0};
        MdShr: if (!md_done) md_lo <= {md_lo[32], md_lo[32:1]};
        default: begin  // MdMul, MdMulh: Booth
          if (md_cnt != 6'd33) begin
            logic [33:0] ps;
            ps     = (md_lo[0] != md_q1) ? md_s : md_acc;
            md_q1  <= md_lo[0];
            md_lo  <= {ps[0], md_lo[32:1]};
            md_acc <= {ps[33], ps[33:1]};
          end
        end
      endcase
    end
  end
  logic [31:0] md_res;
  assign md_done = md_op[1] ? (md_cnt == {1'b0, md_sh}) : (md_cnt == 6'd33);
  assign md_res  = (md_op == MdMulh) ? {md_acc[30:0], md_lo[32]} : md_lo[31:0];

  // ---------------- loads and stores ----------------
  logic [31:0] req_addr_q, req_wdata_q;
  logic [3:0] req_strb_q;
  logic req_we_q, req_rom_q, rom_ph_q;  // rom_ph_q: the ROM word of a ROM load is at hand
  logic [1:0] req_off_q;
  logic [31:0] st_data, ld_val, ld_word;
  logic [3:0] st_strb;
  assign {st_strb, st_data} = nasa_rv_pkg::st_lanes(f3[1:0], rs2_v, sum[1:0]);
  assign ld_word = req_rom_q ? rom_data_i : bus_rdata_i;
  always_comb begin
    logic [15:0] h;
    logic [7:0] b;
    h = req_off_q[1] ? ld_word[31:16] : ld_word[15:0];
    b = req_off_q[0] ? h[15:8] : h[7:0];
    unique case (ir_q[14:12])
      3'd0: ld_val = {{24{b[7]}}, b};
      3'd1: ld_val = {{16{h[15]}}, h};
      3'd4: ld_val = {24'd0, b};
      3'd5: ld_val = {16'd0, h};
      default: ld_val = ld_word;
    endcase
  end
  logic is_rom_addr, misaligned;
  assign misaligned  = (opc == OpLd || opc == OpSt) &&
                       ((f3[1:0] == 2'd1 && sum[0]) || (f3[1:0] == 2'd2 && sum[1:0] != '0));
  assign is_rom_addr = (sum[31:28] == ResetPc[31:28]);
  assign bus_req_o   = (st_q == SMem) && !req_rom_q;
  assign bus_we_o    = req_we_q;
  assign bus_addr_o  = req_addr_q;
  assign bus_wdata_o = req_wdata_q;
  assign bus_wstrb_o = req_strb_q;
  assign bus_rom_o   = req_rom_q;

  // ---------------- sequencing ----------------
  logic finish;  // the instruction completes this cycle: rd written, the next one fetched
  assign pc1 = pc_q + RomAW'(1);
  assign tgt = pc_q + RomAW'(((opc == OpJal) ? imm_j : imm_b) >> 2);
  logic br_take_q;  // a branch's outcome, registered in SExe, used in SBr
  always_comb begin
    next_pc = pc1;
    if (opc == OpJal) next_pc = tgt;
    else if (opc == OpJalr) next_pc = RomAW'(sum >> 2);
  end
  // ROM port (its address never depends on the adder: that path would set the clock): when an
  // instruction finishes, the next one's address (jal: its target; taken branches and jalr
  // fetch their target from pc_q in SFetch); a ROM data read in its first SMem cycle
  logic redirect;  // a jalr: the target is fetched in SFetch
  assign redirect = (opc == OpJalr);
  // (in SMem and SMd the next instruction is pc1 whenever the instruction finishes: the ROM
  // reads it every cycle, so the address does not wait for the bus or the multiplier)
  // an instruction that completes in SExe (decode only: never the bus's or the multiplier's
  // completion, which must not reach the ROM address)
  logic exe_fin;
  assign exe_fin = legal && !(opc == OpLd || opc == OpSt || opc == OpBr || is_md || is_shift);
  always_comb begin
    rom_addr_o = pc_q;
    unique case (st_q)
      SMem:    rom_addr_o = (req_rom_q && !rom_ph_q) ? req_addr_q[RomAW+1:2] : pc1;
      SMd:     rom_addr_o = pc1;
      SBr:     rom_addr_o = br_take_q ? tgt : pc1;
      SExe:    if (exe_fin) rom_addr_o = (opc == OpJal) ? tgt : pc1;
      default: ;
    endcase
  end
  always_comb begin
    finish = 1'b0;
    we     = 1'b0;
    wa     = rd;
    wd     = alu;
    ra1    = (st_q == SDec) ? rom_data_i[19:15] : rs1;
    ra2    = (st_q == SDec) ? rom_data_i[24:20] : rs2;
    unique case (st_q)
      SExe: begin
        if (!exe_fin) begin
          finish = 1'b0;  // (misaligned: loads and stores only; branches finish in SBr)
        end else begin
          finish = 1'b1;
          we     = (rd != 5'd0) && (opc != OpBr) && (opc != OpFence);
          wd     = alu;
        end
      end
      SMem: begin
        finish = req_rom_q ? rom_ph_q : bus_done_i;
        we     = finish && !req_we_q && (ir_q[11:7] != 5'd0);
        wa     = ir_q[11:7];
        wd     = ld_val;
      end
      SMd: begin
        finish = md_done;
        we     = md_done && (ir_q[11:7] != 5'd0);
        wa     = ir_q[11:7];
        wd     = md_res;
      end
      default: ;
    endcase
  end

  // next state: restart_i wins over everything; a trap stays until then
  always_comb begin
    st_d = st_q;
    unique case (st_q)
      SBoot: st_d = SDec;  // the ROM shows the word at ResetPc (rom_addr_o = pc)
      SDec:  st_d = SExe;
      SExe: begin
        if (!legal || misaligned) begin
          st_d = STrap;
        end else if (opc == OpLd || opc == OpSt) begin
          st_d = SMem;
        end else if (is_md || is_shift) begin
          st_d = SMd;
        end else if (opc == OpBr) begin
          st_d = SBr;
        end else begin
          st_d = redirect ? SFetch : SDec;
        end
      end
      SFetch: st_d = SDec;  // the ROM reads the target at pc_q
      SBr:    st_d = SDec;  // the ROM reads the branch's next instruction
      SMem, SMd: if (finish) st_d = SDec;
      default: ;
    endcase
    if (restart_i) st_d = SBoot;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q        <= SBoot;
      pc_q        <= '0;
      ir_q        <= '0;
      req_addr_q  <= '0;
      req_wdata_q <= '0;
      req_strb_q  <= '0;
      req_we_q    <= 1'b0;
      req_rom_q   <= 1'b0;
      req_off_q   <= '0;
      rom_ph_q    <= 1'b0;
      br_take_q   <= 1'b0;
      trap_pc_o   <= '0;
    end else begin
      st_q <= st_d;
      unique case (st_q)
        SBoot: pc_q <= '0;
        SDec:  ir_q <= rom_data_i;
        SExe: begin
          if (!legal || misaligned) begin
            trap_pc_o <= pc_full;
          end else if (opc == OpLd || opc == OpSt) begin
            req_addr_q  <= {sum[31:2], 2'b00};
            req_off_q   <= sum[1:0];
            req_we_q    <= (opc == OpSt);
            req_rom_q   <= (opc == OpLd) && is_rom_addr;
            req_wdata_q <= st_data;  // (bytes and halves replicated: the strobes pick the lane)
            req_strb_q  <= st_strb;
          end else if (is_md || is_shift) begin
            // (SMd: the multiply unit loads its operands)
          end else if (opc == OpBr) begin
            br_take_q <= take;  // (the compare's only destination: a register)
          end else begin
            pc_q <= next_pc;
          end
        end
        SBr: pc_q <= br_take_q ? tgt : pc1;
        SMem, SMd: begin
          rom_ph_q <= (st_q == SMem) && req_rom_q && !rom_ph_q;
          if (finish) pc_q <= pc1;
        end
        default: ;
      endcase
      if (restart_i) pc_q <= '0;
    end
  end
  assign trap_o   = (st_q == STrap);
  // (a redirecting instruction retires when its target is fetched: the ISS's cycle count)
  assign retire_o = (finish && !(st_q == SExe && redirect)) || (st_q == SFetch) || (st_q == SBr);
endmodule
