// RV32IM controller of the `fpga` configuration (docs/fpga.md "The board's core"): a multi-cycle
// core built for area, with fixed, simple timing that the host-side ISS (sw/src/mcu_iss.cpp)
// replays cycle for cycle. Instructions come from a ROM port (one-cycle read latency, shared
// with data loads from the ROM); the register file is a two-read-port RAM written at the end of
// an instruction. Data go over one request/response bus (any latency; a store completes when it
// is accepted). Cycles per instruction: ALU, jumps, branches, fence 2; loads and stores 2 + the
// bus wait (ROM: 1); mul 2 + 6; mulh* 2 + 34; div*/rem* 2 + 35. An illegal instruction (ecall and ebreak
// too) or a misaligned load or store stops the core: trap_o stays high, trap_pc_o holds its
// address.
// Area: one 32-bit adder serves add/sub/compare/branch/address/auipc/jalr, one right shifter
// (left shifts through bit reversal), one 34-bit adder the multiplies (mul: three 16x16
// products of one DSP; mulh*: radix-2 Booth, 33 steps) and the divide (restoring on magnitudes,
// 32 steps); the PC holds only the ROM's word index (jump targets wrap inside the ROM and drop
// their low two bits).
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
  typedef enum logic [2:0] {SBoot, SDec, SExe, SMem, SMd, STrap} state_e;
  state_e st_q;

  logic [RomAW-1:0] pc_q;  // word index in the ROM
  logic [31:0] pc_full, ir_q;
  assign pc_full = ResetPc | (32'(pc_q) << 2);
  logic [31:0] rs1_v, rs2_v;

  // ---------------- register file: 31 x 32, two read ports, registered reads ----------------
  logic [31:0] rf_q [32];
  logic [4:0] ra1, ra2, wa;
  logic [31:0] rd1_q, rd2_q, wd;
  logic we;
  always_ff @(posedge clk_i) begin
    if (we) rf_q[wa] <= wd;
    rd1_q <= rf_q[ra1];
    rd2_q <= rf_q[ra2];
  end
  logic rs1_zero_q, rs2_zero_q;

  // ---------------- decode ----------------
  logic [31:0] ir;  // in SDec: the ROM word; afterwards the held instruction
  assign ir = (st_q == SDec) ? rom_data_i : ir_q;
  logic [6:0] opc, f7;
  logic [2:0] f3;
  logic [4:0] rd, rs1, rs2;
  assign opc = ir[6:0];
  assign rd  = ir[11:7];
  assign f3  = ir[14:12];
  assign rs1 = ir[19:15];
  assign rs2 = ir[24:20];
  assign f7  = ir[31:25];
  logic [31:0] imm_i, imm_s, imm_b, imm_u, imm_j;
  assign imm_i = {{20{ir[31]}}, ir[31:20]};
  assign imm_s = {{20{ir[31]}}, ir[31:25], ir[11:7]};
  assign imm_b = {{19{ir[31]}}, ir[31], ir[7], ir[30:25], ir[11:8], 1'b0};
  assign imm_u = {ir[31:12], 12'd0};
  assign imm_j = {{11{ir[31]}}, ir[31], ir[19:12], ir[20], ir[30:21], 1'b0};

  localparam logic [6:0] OpLui = 7'h37, OpAuipc = 7'h17, OpJal = 7'h6F, OpJalr = 7'h67,
                         OpBr = 7'h63, OpLd = 7'h03, OpSt = 7'h23, OpImm = 7'h13, OpReg = 7'h33,
                         OpFence = 7'h0F;
  logic is_md, legal;
  assign is_md = (opc == OpReg) && (f7 == 7'h01);
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
      OpReg:   legal = (f7 == 7'h00) || (f7 == 7'h01) ||
                       (f7 == 7'h20 && (f3 == 3'd0 || f3 == 3'd5));
      OpFence: legal = 1'b1;
      default: legal = 1'b0;
    endcase
  end

  // ---------------- execute: one adder, one shifter ----------------
  assign rs1_v = rs1_zero_q ? 32'd0 : rd1_q;
  assign rs2_v = rs2_zero_q ? 32'd0 : rd2_q;
  logic [31:0] add_a, op_b, add_b, alu, sum, xorv, shr;
  logic [32:0] sum33;
  logic sub, lt, ltu, eq, take;
  always_comb begin
    unique case (opc)
      OpReg, OpBr: op_b = rs2_v;
      OpSt:        op_b = imm_s;
      OpAuipc:     op_b = imm_u;
      default:     op_b = imm_i;  // OpImm, loads, jalr
    endcase
  end
  assign add_a = (opc == OpAuipc) ? pc_full : rs1_v;
  // subtract: sub, slt(i)/slt(i)u, branches
  assign sub   = (opc == OpBr) ||
                 ((opc == OpReg || opc == OpImm) && (f3 == 3'd2 || f3 == 3'd3)) ||
                 (opc == OpReg && f3 == 3'd0 && f7[5]);
  assign add_b = sub ? ~op_b : op_b;
  assign sum33 = {1'b0, add_a} + {1'b0, add_b} + 33'(sub);
  assign sum   = sum33[31:0];
  assign ltu   = !sum33[32];
  assign lt    = (rs1_v[31] != op_b[31]) ? rs1_v[31] : sum[31];
  assign xorv  = rs1_v ^ op_b;
  assign eq    = (xorv == '0);
  // right shift of rs1 (or of rs1 reversed, for a left shift), arithmetic for sra(i)
  logic [4:0] shamt;
  logic [31:0] shin, rs1_rev, shr_rev;
  assign shamt = op_b[4:0];
  for (genvar i = 0; i < 32; i++) begin : g_rev
    assign rs1_rev[i] = rs1_v[31-i];
    assign shr_rev[i] = shr[31-i];
  end
  assign shin = (f3 == 3'd1) ? rs1_rev : rs1_v;
  assign shr  = 32'($signed({f7[5] && (f3 == 3'd5) && rs1_v[31], shin}) >>> shamt);
  always_comb begin
    unique case (f3)
      3'd0: alu = sum;
      3'd1: alu = shr_rev;
      3'd2: alu = {31'd0, lt};
      3'd3: alu = {31'd0, ltu};
      3'd4: alu = xorv;
      3'd5: alu = shr;
      3'd6: alu = rs1_v | op_b;
      default: alu = rs1_v & op_b;
    endcase
  end
  always_comb begin
    unique case (f3)
      3'd0: take = eq;
      3'd1: take = !eq;
      3'd4: take = lt;
      3'd5: take = !lt;
      3'd6: take = ltu;
      default: take = !ltu;
    endcase
  end

  // ---------------- multiply and divide: one 34-bit adder, one 16x16 multiplier ----------------
  // mul (the low word): aL*bL + (aH*bL + aL*bH) << 16 through one registered 16x16 multiplier
  //   (a DSP with its inputs and output registered: nextpnr does not time a DSP's inside):
  //   step 0 presents aL,bL; 1 aH,bL; 2 aL,bH; the products arrive two steps later and are
  //   summed into md_acc at steps 2-4; done at step 5.
  // mulh, mulhsu, mulhu: radix-2 Booth on 33-bit operands (sign- or zero-extended as the
  //   instruction says): the multiplier in md_lo, the multiplicand in md_b, the partial sum in
  //   md_acc; 33 steps, then the product is {md_acc[32:0], md_lo}.
  // div*/rem*: step 0 takes the dividend's magnitude (md_lo), step 1 the divisor's (md_b), each
  //   0 - x through the adder (md_acc is still 0); steps 2-33 restore one quotient bit each
  //   (quotient md_lo, remainder md_acc); the result's sign is applied as it is written. x/0
  //   gives all ones and x rem 0 gives x as the spec says; -2^31 / -1 overflows to -2^31 (and
  //   rem 0) without a special case.
  typedef enum logic [1:0] {MdMul, MdMulh, MdDiv} md_e;
  md_e md_op;
  logic [33:0] md_acc;
  logic [32:0] md_lo, md_b;
  logic md_q1;          // Booth: the multiplier bit shifted out last
  logic [5:0] md_cnt;
  logic md_qneg, md_rneg, md_signed;
  logic [33:0] md_x, md_y, md_s;
  logic md_sub;
  logic [32:0] div_sh;  // the partial remainder shifted left with the next dividend bit
  logic [15:0] mx_q, my_q;
  logic [31:0] mp_q;
  assign div_sh = {md_acc[31:0], md_lo[31]};
  // the 16x16 multiplier: halves selected by the step (rs1_v, rs2_v hold during SMd)
  always_ff @(posedge clk_i) begin
    mx_q <= (md_cnt == 6'd1) ? rs1_v[31:16] : rs1_v[15:0];
    my_q <= (md_cnt == 6'd2) ? rs2_v[31:16] : rs2_v[15:0];
    mp_q <= 32'(mx_q) * 32'(my_q);
  end
  always_comb begin
    md_x   = md_acc;
    md_y   = {md_b[32], md_b};
    md_sub = 1'b1;
    unique case (md_op)
      MdMul: begin
        md_y   = {2'b00, mp_q[15:0], 16'd0};
        md_sub = 1'b0;
      end
      MdMulh: md_sub = md_lo[0];  // 10: subtract, 01: add (00 and 11: neither, see below)
      default: begin
        if (md_cnt == 6'd0) md_y = {md_lo[32], md_lo};  // 0 - dividend
        else if (md_cnt >= 6'd2) md_x = {1'b0, div_sh};
      end
    endcase
  end
  assign md_s = md_x + (md_y ^ {34{md_sub}}) + 34'(md_sub);  // (one adder)
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      md_op     <= MdMul;
      md_acc    <= '0;
      md_lo     <= '0;
      md_b      <= '0;
      md_q1     <= 1'b0;
      md_cnt    <= '0;
      md_qneg   <= 1'b0;
      md_rneg   <= 1'b0;
      md_signed <= 1'b0;
    end else if (st_q == SExe && is_md) begin
      md_op     <= f3[2] ? MdDiv : (f3 == 3'd0) ? MdMul : MdMulh;
      md_acc    <= '0;
      md_q1     <= 1'b0;
      md_cnt    <= '0;
      md_signed <= !f3[0];
      if (!f3[2]) begin
        // Booth: the multiplier signed for mulh, mulhsu; the multiplicand for mulh
        md_lo <= {(f3 != 3'd3) && rs1_v[31], rs1_v};
        md_b  <= {(f3 == 3'd1) && rs2_v[31], rs2_v};
      end else begin
        md_lo <= {1'b0, rs1_v};
        md_b  <= {1'b0, rs2_v};
      end
      md_qneg <= !f3[0] && (rs1_v[31] != rs2_v[31]) && (rs2_v != '0);
      md_rneg <= !f3[0] && rs1_v[31];
    end else if (st_q == SMd) begin
      md_cnt <= md_cnt + 6'd1;
      unique case (md_op)
        MdMul: begin
          if (md_cnt == 6'd2) md_acc <= {2'b00, mp_q};
          else if (md_cnt == 6'd3 || md_cnt == 6'd4) md_acc <= md_s;
        end
        MdMulh: begin
          if (md_cnt != 6'd33) begin
            logic [33:0] ps;
            ps     = (md_lo[0] != md_q1) ? md_s : md_acc;
            md_q1  <= md_lo[0];
            md_lo  <= {ps[0], md_lo[32:1]};
            md_acc <= {ps[33], ps[33:1]};
          end
        end
        default: begin
          if (md_cnt == 6'd0) begin
            if (md_signed && md_lo[31]) md_lo <= {1'b0, md_s[31:0]};
          end else if (md_cnt == 6'd1) begin
            if (md_signed && md_b[31]) md_b <= {1'b0, md_s[31:0]};
          end else if (md_cnt != 6'd34) begin
            if (!md_s[33]) begin
              md_acc <= {1'b0, md_s[32:0]};
              md_lo  <= {md_lo[31:0], 1'b1};
            end else begin
              md_acc <= {1'b0, div_sh};
              md_lo  <= {md_lo[31:0], 1'b0};
            end
          end
        end
      endcase
    end
  end
  logic md_done;
  logic [31:0] md_res, md_mag;
  logic md_neg;
  always_comb begin
    unique case (md_op)
      MdMul:   md_done = (md_cnt == 6'd5);
      MdMulh:  md_done = (md_cnt == 6'd33);
      default: md_done = (md_cnt == 6'd34);
    endcase
  end
  assign md_mag = f3[1] ? md_acc[31:0] : md_lo[31:0];
  assign md_neg = f3[1] ? md_rneg : md_qneg;
  always_comb begin
    unique case (md_op)
      MdMul:   md_res = md_acc[31:0];
      MdMulh:  md_res = {md_acc[30:0], md_lo[32]};
      default: md_res = md_neg ? -md_mag : md_mag;
    endcase
  end

  // ---------------- loads and stores ----------------
  logic [31:0] req_addr_q, req_wdata_q;
  logic [3:0] req_strb_q;
  logic req_we_q, req_rom_q;
  logic [1:0] req_off_q;
  logic [31:0] st_data, ld_val, ld_word;
  logic [3:0] st_strb;
  always_comb begin
    unique case (f3[1:0])
      2'd0: begin st_data = {4{rs2_v[7:0]}}; st_strb = 4'b0001 << sum[1:0]; end
      2'd1: begin st_data = {2{rs2_v[15:0]}}; st_strb = 4'b0011 << sum[1:0]; end
      default: begin st_data = rs2_v; st_strb = 4'b1111; end
    endcase
  end
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
  logic [RomAW-1:0] next_pc, pc1, tgt;
  logic finish;  // the instruction completes this cycle: rd written, the next one fetched
  assign pc1 = pc_q + RomAW'(1);
  assign tgt = pc_q + RomAW'(((opc == OpJal) ? imm_j : imm_b) >> 2);
  always_comb begin
    next_pc = pc1;
    if (opc == OpJal || (opc == OpBr && take)) next_pc = tgt;
    else if (opc == OpJalr) next_pc = RomAW'(sum >> 2);
  end
  // ROM port: the next instruction's address when one finishes; a ROM data read in SExe
  always_comb begin
    rom_addr_o = pc_q;
    if (st_q == SExe && (opc == OpLd) && is_rom_addr) rom_addr_o = RomAW'(sum >> 2);
    else if (finish) rom_addr_o = (st_q == SExe) ? next_pc : pc1;
  end
  always_comb begin
    finish = 1'b0;
    we     = 1'b0;
    wa     = rd;
    wd     = alu;
    ra1    = rs1;
    ra2    = rs2;
    unique case (st_q)
      SExe: begin
        if (!legal || misaligned || opc == OpLd || opc == OpSt || is_md) begin
          finish = 1'b0;
        end else begin
          finish = 1'b1;
          we     = (rd != 5'd0) && (opc != OpBr) && (opc != OpFence);
          unique case (opc)
            OpLui:         wd = imm_u;
            OpAuipc:       wd = sum;
            OpJal, OpJalr: wd = ResetPc | (32'(pc1) << 2);
            default:       wd = alu;
          endcase
        end
      end
      SMem: begin
        finish = req_rom_q || bus_done_i;
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

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q        <= SBoot;
      pc_q        <= '0;
      ir_q        <= '0;
      rs1_zero_q  <= 1'b1;
      rs2_zero_q  <= 1'b1;
      req_addr_q  <= '0;
      req_wdata_q <= '0;
      req_strb_q  <= '0;
      req_we_q    <= 1'b0;
      req_rom_q   <= 1'b0;
      req_off_q   <= '0;
      trap_pc_o   <= '0;
    end else begin
      unique case (st_q)
        SBoot: begin
          pc_q <= '0;
          st_q <= SDec;  // the ROM shows the word at ResetPc (rom_addr_o = pc)
        end
        SDec: begin
          ir_q       <= rom_data_i;
          rs1_zero_q <= (rs1 == 5'd0);
          rs2_zero_q <= (rs2 == 5'd0);
          st_q       <= SExe;
        end
        SExe: begin
          if (!legal || misaligned) begin
            st_q      <= STrap;
            trap_pc_o <= pc_full;
          end else if (opc == OpLd || opc == OpSt) begin
            st_q        <= SMem;
            req_addr_q  <= {sum[31:2], 2'b00};
            req_off_q   <= sum[1:0];
            req_we_q    <= (opc == OpSt);
            req_rom_q   <= (opc == OpLd) && is_rom_addr;
            req_wdata_q <= st_data;  // (bytes and halves replicated: the strobes pick the lane)
            req_strb_q  <= st_strb;
          end else if (is_md) begin
            st_q <= SMd;
          end else begin
            pc_q <= next_pc;
            st_q <= SDec;
          end
        end
        SMem, SMd: begin
          if (finish) begin
            pc_q <= pc1;
            st_q <= SDec;
          end
        end
        default: ;
      endcase
      if (restart_i) begin
        st_q <= SBoot;
        pc_q <= '0;
      end
    end
  end
  assign trap_o   = (st_q == STrap);
  assign retire_o = finish;
endmodule
