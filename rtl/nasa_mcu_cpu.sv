// RV32IM controller of the `fpga` configuration (docs/fpga.md "The board's core"): a multi-cycle
// core with fixed, simple timing that the host-side ISS (sw/src/mcu_iss.cpp) replays cycle for
// cycle. Instructions come from a ROM port (one-cycle read latency, shared with data loads from
// the ROM); the register file is a two-read-port RAM written at the end of an instruction's
// execute cycle. Data go over one request/response bus (any latency; a store completes when it
// is accepted). Cycles per instruction: ALU, jumps, branches, fence 2; loads and stores 2 + the
// bus wait (ROM: 1); mul* 2 + 7; div*/rem* 2 + 33. An illegal instruction (ecall and ebreak too)
// or a misaligned load or store stops the core: trap_o stays high, trap_pc_o holds its address.
module nasa_mcu_cpu #(
  parameter logic [31:0] ResetPc  = 32'h4000_0000,
  parameter int unsigned RomWords = 4096,  // ROM size in 32-bit words (a power of two)
  localparam int unsigned RomAW   = $clog2(RomWords)
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             run_i,       // low: held at the reset PC (the ROM may be loading)
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

  logic [31:0] pc_q, ir_q;
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

  // ---------------- execute ----------------
  assign rs1_v = rs1_zero_q ? 32'd0 : rd1_q;
  assign rs2_v = rs2_zero_q ? 32'd0 : rd2_q;
  logic [31:0] op_b, alu, sum, pc4, br_tgt, ld_addr;
  logic [4:0] shamt;
  logic lt, ltu, take;
  assign op_b   = (opc == OpReg) ? rs2_v : imm_i;
  assign shamt  = op_b[4:0];
  assign sum    = (opc == OpReg && f7 == 7'h20) ? rs1_v - op_b : rs1_v + op_b;
  assign lt     = $signed(rs1_v) < $signed(op_b);
  assign ltu    = rs1_v < op_b;
  assign pc4    = pc_q + 32'd4;
  assign br_tgt = pc_q + imm_b;
  always_comb begin
    unique case (f3)
      3'd0: alu = sum;
      3'd1: alu = rs1_v << shamt;
      3'd2: alu = {31'd0, lt};
      3'd3: alu = {31'd0, ltu};
      3'd4: alu = rs1_v ^ op_b;
      3'd5: alu = f7[5] ? 32'($signed(rs1_v) >>> shamt) : rs1_v >> shamt;
      3'd6: alu = rs1_v | op_b;
      default: alu = rs1_v & op_b;
    endcase
  end
  always_comb begin
    unique case (f3)
      3'd0: take = (rs1_v == rs2_v);
      3'd1: take = (rs1_v != rs2_v);
      3'd4: take = $signed(rs1_v) < $signed(rs2_v);
      3'd5: take = $signed(rs1_v) >= $signed(rs2_v);
      3'd6: take = rs1_v < rs2_v;
      default: take = rs1_v >= rs2_v;
    endcase
  end
  assign ld_addr = rs1_v + ((opc == OpSt) ? imm_s : imm_i);

  // ---------------- multiply and divide ----------------
  // Multiply: the unsigned 32x32 product of the operands' bit patterns from four 16x16 partial
  // products through one registered multiplier (a DSP with its inputs and output registered:
  // nextpnr does not time a DSP's inside), steps 0-3 select the halves, steps 2-5 accumulate;
  // the high word is then corrected for signed operands (subtract b if a < 0, a if b < 0).
  // Divide: restoring, one quotient bit per cycle on magnitudes, signs and the special cases
  // (divisor 0, -2^31 / -1) applied at the end. Both finish after a fixed number of cycles.
  logic [31:0] ma_q, mb_q;
  logic [15:0] xa_q, xb_q;
  logic [31:0] pr_q;
  logic [63:0] macc_q;
  logic [2:0] mcnt_q;
  logic msa_q, msb_q;  // the operands are signed and negative
  logic [5:0] dcnt_q;
  logic [31:0] dq_q, dr_q, dd_q;  // quotient, remainder, divisor (magnitudes)
  logic dneg_q, rneg_q, dzero_q, dovf_q;
  logic md_done;
  logic [31:0] md_res, mhi;
  logic [32:0] dsub;
  assign dsub = {dr_q, dq_q[31]} - {1'b0, dd_q};
  always_ff @(posedge clk_i) begin
    xa_q <= mcnt_q[1] ? ma_q[31:16] : ma_q[15:0];
    xb_q <= mcnt_q[0] ? mb_q[31:16] : mb_q[15:0];
    pr_q <= 32'(xa_q) * 32'(xb_q);
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ma_q    <= '0;
      mb_q    <= '0;
      macc_q  <= '0;
      mcnt_q  <= '0;
      msa_q   <= 1'b0;
      msb_q   <= 1'b0;
      dcnt_q  <= '0;
      dq_q    <= '0;
      dr_q    <= '0;
      dd_q    <= '0;
      dneg_q  <= 1'b0;
      rneg_q  <= 1'b0;
      dzero_q <= 1'b0;
      dovf_q  <= 1'b0;
    end else if (st_q == SExe && is_md) begin
      ma_q    <= rs1_v;
      mb_q    <= rs2_v;
      macc_q  <= '0;
      mcnt_q  <= '0;
      msa_q   <= (f3 != 3'd3) && rs1_v[31];  // mulhu: both unsigned; mulhsu: rs2 unsigned
      msb_q   <= (f3 == 3'd0 || f3 == 3'd1) && rs2_v[31];
      dcnt_q  <= '0;
      dq_q    <= (!f3[0] && rs1_v[31]) ? -rs1_v : rs1_v;
      dr_q    <= '0;
      dd_q    <= (!f3[0] && rs2_v[31]) ? -rs2_v : rs2_v;
      dneg_q  <= !f3[0] && (rs1_v[31] ^ rs2_v[31]);
      rneg_q  <= !f3[0] && rs1_v[31];
      dzero_q <= (rs2_v == '0);
      dovf_q  <= !f3[0] && (rs1_v == 32'h8000_0000) && (rs2_v == 32'hFFFF_FFFF);
    end else if (st_q == SMd) begin
      if (mcnt_q != 3'd7) mcnt_q <= mcnt_q + 3'd1;
      // the product of step t (halves selected at t, multiplied at t+1) is added at t+2
      unique case (mcnt_q)
        3'd2: macc_q <= macc_q + 64'(pr_q);
        3'd3, 3'd4: macc_q <= macc_q + (64'(pr_q) << 16);
        3'd5: macc_q <= macc_q + (64'(pr_q) << 32);
        default: ;
      endcase
      if (dcnt_q != 6'd32) begin
        dcnt_q <= dcnt_q + 6'd1;
        if (!dsub[32]) begin
          dr_q <= dsub[31:0];
          dq_q <= {dq_q[30:0], 1'b1};
        end else begin
          dr_q <= {dr_q[30:0], dq_q[31]};
          dq_q <= {dq_q[30:0], 1'b0};
        end
      end
    end
  end
  assign md_done = f3[2] ? (dcnt_q == 6'd32) : (mcnt_q == 3'd6);
  assign mhi     = macc_q[63:32] - (msa_q ? mb_q : 32'd0) - (msb_q ? ma_q : 32'd0);
  always_comb begin
    unique case (f3)
      3'd0: md_res = macc_q[31:0];
      3'd1, 3'd2, 3'd3: md_res = mhi;
      3'd4: md_res = dzero_q ? 32'hFFFF_FFFF : dovf_q ? 32'h8000_0000 : (dneg_q ? -dq_q : dq_q);
      3'd5: md_res = dzero_q ? 32'hFFFF_FFFF : dq_q;
      3'd6: md_res = dzero_q ? rs1_v : dovf_q ? 32'd0 : (rneg_q ? -dr_q : dr_q);
      default: md_res = dzero_q ? rs1_v : dr_q;
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
      2'd0: begin st_data = {4{rs2_v[7:0]}}; st_strb = 4'b0001 << ld_addr[1:0]; end
      2'd1: begin st_data = {2{rs2_v[15:0]}}; st_strb = 4'b0011 << ld_addr[1:0]; end
      default: begin st_data = rs2_v; st_strb = 4'b1111; end
    endcase
  end
  assign ld_word = req_rom_q ? rom_data_i : bus_rdata_i;
  always_comb begin
    logic [31:0] sh;
    sh = ld_word >> {req_off_q, 3'b000};
    unique case (ir_q[14:12])
      3'd0: ld_val = {{24{sh[7]}}, sh[7:0]};
      3'd1: ld_val = {{16{sh[15]}}, sh[15:0]};
      3'd4: ld_val = {24'd0, sh[7:0]};
      3'd5: ld_val = {16'd0, sh[15:0]};
      default: ld_val = sh;
    endcase
  end
  logic is_rom_addr, misaligned;
  assign misaligned  = (opc == OpLd || opc == OpSt) &&
                       ((f3[1:0] == 2'd1 && ld_addr[0]) || (f3[1:0] == 2'd2 && ld_addr[1:0] != '0));
  assign is_rom_addr = (ld_addr[31:28] == ResetPc[31:28]);
  assign bus_req_o   = (st_q == SMem) && !req_rom_q;
  assign bus_we_o    = req_we_q;
  assign bus_addr_o  = req_addr_q;
  assign bus_wdata_o = req_wdata_q;
  assign bus_wstrb_o = req_strb_q;
  assign bus_rom_o   = req_rom_q;

  // ---------------- sequencing ----------------
  logic [31:0] next_pc;
  logic finish;  // the instruction completes this cycle: rd written, the next one fetched
  always_comb begin
    next_pc = pc4;
    if (opc == OpJal) next_pc = pc_q + imm_j;
    else if (opc == OpJalr) next_pc = (rs1_v + imm_i) & ~32'd1;
    else if (opc == OpBr && take) next_pc = br_tgt;
  end
  // ROM port: the next instruction's address when one finishes; a ROM data read in SExe
  always_comb begin
    rom_addr_o = RomAW'(pc_q >> 2);
    if (st_q == SExe && (opc == OpLd) && is_rom_addr) rom_addr_o = RomAW'(ld_addr >> 2);
    else if (finish) rom_addr_o = RomAW'(((st_q == SExe) ? next_pc : pc4) >> 2);
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
            OpLui:   wd = imm_u;
            OpAuipc: wd = pc_q + imm_u;
            OpJal, OpJalr: wd = pc4;
            default: wd = alu;
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
      pc_q        <= ResetPc;
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
          pc_q <= ResetPc;
          if (run_i) st_q <= SDec;  // the ROM shows the word at ResetPc (rom_addr_o = pc)
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
            trap_pc_o <= pc_q;
          end else if (opc == OpLd || opc == OpSt) begin
            st_q        <= SMem;
            req_addr_q  <= {ld_addr[31:2], 2'b00};
            req_off_q   <= ld_addr[1:0];
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
            pc_q <= pc4;
            st_q <= SDec;
          end
        end
        default: ;
      endcase
    end
  end
  assign trap_o   = (st_q == STrap);
  assign retire_o = finish;
endmodule
