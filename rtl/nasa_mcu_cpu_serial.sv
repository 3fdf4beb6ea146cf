// A bit-serial RV32I controller for the board (docs/fpga.md "Toward eight DSPs multiplying"): the
// same ports as nasa_mcu_cpu, less than half its logic and a quarter of its EBRs, at five to ten
// times its cycles (17 to 34 for most instructions, against 2 to 4); built for the step where
// the MAC array does the convolutions and the firmware only sets layers up. Not
// instantiated yet. Its timing is fixed and simple, and the host-side ISS replays it cycle for
// cycle (nasa::mcu::Iss with Core::Serial; tb/rtlunit_mcu_cpu_serial.cpp runs them in lockstep).
//
// Datapath: two bits a step, low bits first. The register file is one RAM of 512 x 2 bits (one
// EBR: a read and a write port), read a bit pair a cycle: an instruction that reads one register
// (immediate ALU ops, loads, jalr; lui, auipc and jal read none) takes its 32 bits in 16 cycles,
// one that reads two (register ALU ops, branches, stores) in 32, alternating rs1's pair and rs2's.
// A 2-bit adder and logic unit carry from pair to pair; result pairs are written as they are
// made. The sum shifts into a 32-bit register (the load/store address, jalr's target; a shift's
// operand), a store's rs2 into another (which takes a load's word). A load's and a shift's result
// are written back from those registers, two bits a cycle, after as many cycles of shifting as
// the access offset or the right shift needs. No multiplier and no divider: mul*/div*/rem* are
// illegal (the firmware multiplies in software, libgcc).
//
// Cycles per instruction (from the cycle the instruction word is at hand to the next one's; the
// ISS's Core::Serial): lui, auipc, jal, fence and immediate ALU ops 17; slti(u) and jalr 18;
// register ALU ops 33; slt(u) and branches 34; loads 17 + the bus wait + 4 x the byte offset + 16
// (the ROM's bus wait: 2); stores 33 + the bus wait; sll(i) 17 or 33, then 16; srl(i)/sra(i) the
// same plus half the shift amount (rounded down). An illegal word stops the core in its second
// cycle, a misaligned load or store when its address is complete: trap_o stays high, trap_pc_o
// holds its address. Instructions come from the ROM port (one-cycle read latency, shared with
// ROM data loads); the PC holds only the ROM's word index.
module nasa_mcu_cpu_serial #(
  parameter logic [31:0] ResetPc  = 32'h4000_0000,
  parameter int unsigned RomWords = 4096,  // ROM size in 32-bit words (a power of two)
  localparam int unsigned RomAW   = $clog2(RomWords)
) (
`include "nasa_mcu_cpu_ports.svh"
);
  // SRun: the operands' pairs; SFin: one more cycle (slt's low pair; a branch's or jalr's next
  // word); SPre: the result register shifted to the load's offset or a right shift's amount;
  // SWb: a load's or a shift's result written back
  typedef enum logic [2:0] {SBoot, SDec, SRun, SFin, SMem, SPre, SWb, STrap} st_e;
  st_e st_q, st_d;
  logic [RomAW-1:0] pc_q;
  logic [31:0] ir_q;
  logic [3:0] i_q;  // the pair in work (SRun, SWb); SPre: the shifts left to do
  logic ph_q;       // two-register SRun: 0 rs1's pair is at hand, 1 rs2's

  // ---------------- decode (of the held instruction) ----------------
  logic [31:0] ir;
  assign ir = ir_q;
`include "nasa_rv_fields.svh"
  logic alu, is_shift, is_sll, is_slt, is_ld, is_st, is_br, is_jalr, two, legal;
  assign alu      = (opc == OpReg) || (opc == OpImm);
  assign is_shift = alu && (f3 == 3'd1 || f3 == 3'd5);
  assign is_sll   = (f3 == 3'd1);
  assign is_slt   = alu && (f3 == 3'd2 || f3 == 3'd3);
  assign is_ld    = (opc == OpLd);
  assign is_st    = (opc == OpSt);
  assign is_br    = (opc == OpBr);
  assign is_jalr  = (opc == OpJalr);
  assign two      = (opc == OpReg) || is_br || is_st;  // reads rs2: two cycles a pair
  assign legal = nasa_rv_pkg::rv_legal(opc, f3, f7, 1'b0);

  // ---------------- register file: 32 x 16 bit pairs in one RAM (one EBR) ----------------
  logic [8:0] ra, wa;
  logic [1:0] rf_o, wd;
  logic we;
  nasa_mcu_rf #(.Words(512), .Width(2)) u_rf (
    .clk_i(clk_i), .we_i(we), .waddr_i(wa), .wdata_i(wd), .raddr_i(ra), .rdata_o(rf_o)
  );

  // ---------------- the 2-bit datapath ----------------
  logic [1:0] a_q, a, b, imm2, pc2, sum, lres, res;
  logic [31:0] imm, pcv;
  logic [2:0] s3;
  logic carry_q, eq_q, sub, cin, compute, last, lt, ltu, lt_q, ltu_q, zero2;
  assign imm  = is_st ? {{20{ir_q[31]}}, ir_q[31:25], ir_q[11:7]} :
                (opc == OpAuipc || opc == OpLui) ? {ir_q[31:12], 12'd0} :
                {{20{ir_q[31]}}, ir_q[31:20]};
  assign imm2 = imm[2*i_q +: 2];
  // auipc's PC, or the link of jal and jalr (the next instruction's address), taken in SDec from
  // the word the ROM shows (no adder between the instruction register and the written pair)
  logic [RomAW-1:0] pcx_q;
  assign pcv  = ResetPc | (32'(pcx_q) << 2);
  assign pc2  = pcv[2*i_q +: 2];
  // a: rs1's pair (from the RAM, or held while rs2's is read), auipc's PC; b: rs2's or the
  // immediate's (stores add the immediate: rs2 is their data)
  assign a    = (opc == OpAuipc) ? pc2 : two ? a_q : rf_o;
  assign b    = ((opc == OpReg) || is_br) ? rf_o : imm2;
  assign sub  = is_br || is_slt || ((opc == OpReg) && (f3 == 3'd0) && f7[5]);
  assign cin  = (i_q == 4'd0) ? sub : carry_q;
  assign s3   = {1'b0, a} + {1'b0, b ^ {2{sub}}} + 3'(cin);
  assign sum  = s3[1:0];
  always_comb begin
    unique case ({opc == OpLui, alu ? f3 : 3'd4})
      {1'b0, 3'd6}: lres = a | b;
      {1'b0, 3'd7}: lres = a & b;
      {1'b0, 3'd4}: lres = a ^ b;  // (also branches: eq is its zero)
      default:      lres = b;      // lui: the immediate
    endcase
  end
  assign zero2 = (lres == '0);
  assign ltu   = !s3[2];
  assign lt    = (a[1] != b[1]) ? a[1] : sum[1];
  always_comb begin
    if (opc == OpJal || is_jalr) res = pc2;
    else if (is_slt) res = '0;  // (its low pair in SFin)
    else if ((opc == OpAuipc) || (alu && f3 == 3'd0)) res = sum;
    else res = lres;
  end
  assign compute = (st_q == SRun) && (!two || ph_q);
  assign last    = compute && (i_q == 4'd15);

  // ---------------- address / operand and data registers ----------------
  // q_q: the sum (a shift: rs1) shifted in from the top; d_q: rs2 (stores), a load's word. Both
  // shift right two bits a cycle in SPre and SWb, the fill entering at the top.
  logic [31:0] q_q, d_q;
  logic [4:0] sh_q;    // shift amount
  logic sgn_q;         // the fill: sra's sign, a signed load's sign
  logic prev_q;        // sll by an odd amount: the bit shifted out last
  logic req_rom, rom_ph_q, ld_done, misaligned;
  assign req_rom    = (q_q[31:28] == ResetPc[31:28]);
  assign ld_done    = (st_q == SMem) && is_ld && (req_rom ? rom_ph_q : bus_done_i);
  // (tested with the last pair: the address's low pair is still one pair up, in q_q[3:2])
  assign misaligned = (f3[1:0] == 2'd1 && q_q[2]) || (f3[1:0] == 2'd2 && q_q[3:2] != '0);
  assign bus_req_o  = (st_q == SMem) && !(is_ld && req_rom);
  assign bus_we_o   = is_st;
  assign bus_addr_o = {q_q[31:2], 2'b00};
  assign bus_rom_o  = is_ld && req_rom;
  assign {bus_wstrb_o, bus_wdata_o} = nasa_rv_pkg::st_lanes(f3[1:0], d_q, q_q[1:0]);
  // SWb's pair: a load's (inside its size; then its sign or 0), sll's (0 until the amount, then
  // rs1's bits, odd amounts through prev_q), srl/sra's (after SPre: odd amounts one bit up)
  logic [1:0] wb2;
  logic in_sz, started;
  assign in_sz   = (f3[1:0] == 2'd2) || (i_q < (f3[0] ? 4'd8 : 4'd4));
  assign started = ({i_q, 1'b1} >= sh_q);
  always_comb begin
    if (is_ld) wb2 = in_sz ? d_q[1:0] : {2{sgn_q}};
    else if (is_sll) wb2 = !started ? 2'b00 : sh_q[0] ? {q_q[0], prev_q} : q_q[1:0];
    else wb2 = sh_q[0] ? q_q[2:1] : q_q[1:0];
  end
  logic shift_q;  // SWb consumes a pair of q_q this cycle
  assign shift_q = !(is_sll && !started);

  // ---------------- sequencing ----------------
  // one PC adder: pc + 1, + a branch's or jal's offset, + 0 (SDec); jalr's target and a ROM
  // load's address come from q_q
  logic [RomAW-1:0] inc, pc_sum;
  logic [31:0] imm_bj;
  logic take, finish, br_take_q, simple, jump, abs;
  assign imm_bj = (opc == OpJal) ? {{11{ir_q[31]}}, ir_q[31], ir_q[19:12], ir_q[20], ir_q[30:21],
                                    1'b0}
                                 : {{19{ir_q[31]}}, ir_q[31], ir_q[7], ir_q[30:25], ir_q[11:8],
                                    1'b0};
  assign take = nasa_rv_pkg::br_take(f3, eq_q && zero2, lt, ltu);
  assign simple = !(is_ld || is_st || is_br || is_shift || is_slt || is_jalr);
  always_comb begin
    unique case (st_q)
      SRun:    finish = last && simple;
      SFin:    finish = 1'b1;
      SMem:    finish = is_st && bus_done_i;
      SWb:     finish = (i_q == 4'd15);
      default: finish = 1'b0;
    endcase
  end
  assign jump = ((st_q == SRun) && (opc == OpJal)) || ((st_q == SFin) && is_br && br_take_q);
  assign abs  = ((st_q == SFin) && is_jalr) || ((st_q == SMem) && is_ld && !rom_ph_q);
  assign inc  = (st_q == SBoot || st_q == SDec) ? '0 : jump ? RomAW'(imm_bj >> 2) : RomAW'(1);
  assign pc_sum = pc_q + inc;
  assign rom_addr_o = abs ? q_q[RomAW+1:2] : pc_sum;
  always_comb begin
    ra = {rs1, i_q + 4'd1};  // one register: rs1's next pair; two: rs1's after rs2's
    if (st_q == SDec) ra = {rom_data_i[19:15], 4'd0};
    else if (two && !ph_q) ra = {rs2, i_q};
    we = 1'b0;
    wa = {rd, i_q};
    wd = res;
    unique case (st_q)
      SRun: we = compute && legal && (rd != 5'd0) && !(is_slt && i_q == 4'd0) &&
                 !(is_ld || is_st || is_br || is_shift || opc == OpFence);
      SFin: begin
        we = is_slt && (rd != 5'd0);
        wa = {rd, 4'd0};
        wd = {1'b0, ir_q[12] ? ltu_q : lt_q};
      end
      SWb: begin
        we = (rd != 5'd0);
        wd = wb2;
      end
      default: ;
    endcase
  end
  // SPre's count: a load's offset in pairs, a right shift's amount in pairs
  logic [3:0] pre;
  assign pre = is_ld ? {q_q[1:0], 2'b00} : (is_sll ? 4'd0 : sh_q[4:1]);
  always_comb begin
    st_d = st_q;
    unique case (st_q)
      SBoot: st_d = SDec;  // the ROM shows the word at ResetPc
      SDec:  st_d = SRun;
      SRun: begin
        if (!legal) st_d = STrap;  // (in the first cycle: nothing is written)
        else if (last) begin
          if ((is_ld || is_st) && misaligned) st_d = STrap;
          else if (is_ld || is_st) st_d = SMem;
          else if (is_shift) st_d = (pre != '0) ? SPre : SWb;
          else if (is_br || is_slt || is_jalr) st_d = SFin;
          else st_d = SDec;
        end
      end
      SMem: if (ld_done) st_d = (pre != '0) ? SPre : SWb;
            else if (finish) st_d = SDec;
      SPre: if (i_q == 4'd1) st_d = SWb;
      SWb, SFin: if (finish) st_d = SDec;
      default: ;
    endcase
    if (restart_i) st_d = SBoot;
  end
  // (the fill: sra's sign; a signed load's sign bit, taken as its last pair in size goes out)
  logic fill;
  assign fill = is_ld ? 1'b0 : sgn_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q      <= SBoot;
      pc_q      <= '0;
      pcx_q     <= '0;
      ir_q      <= '0;
      i_q       <= '0;
      ph_q      <= 1'b0;
      a_q       <= '0;
      carry_q   <= 1'b0;
      eq_q      <= 1'b0;
      lt_q      <= 1'b0;
      ltu_q     <= 1'b0;
      q_q       <= '0;
      d_q       <= '0;
      sh_q      <= '0;
      sgn_q     <= 1'b0;
      prev_q    <= 1'b0;
      rom_ph_q  <= 1'b0;
      br_take_q <= 1'b0;
      trap_pc_o <= '0;
    end else begin
      st_q <= st_d;
      unique case (st_q)
        SDec: begin
          ir_q <= rom_data_i;
          pcx_q <= pc_q + RomAW'(rom_data_i[6:0] != OpAuipc);
          i_q  <= '0;
          ph_q <= 1'b0;
          eq_q <= 1'b1;
        end
        SRun: begin
          if (two) ph_q <= !ph_q;
          if (two && !ph_q) a_q <= rf_o;
          if (compute) begin
            i_q     <= i_q + 4'd1;
            carry_q <= s3[2];
            eq_q    <= eq_q && zero2;
            q_q     <= {is_shift ? a : sum, q_q[31:2]};
            d_q     <= {rf_o, d_q[31:2]};
            lt_q    <= lt;
            ltu_q   <= ltu;
            // the shift amount: b's low five bits (rs2's or the immediate's)
            if (i_q == 4'd0) sh_q[1:0] <= b;
            if (i_q == 4'd1) sh_q[3:2] <= b;
            if (i_q == 4'd2) sh_q[4] <= b[0];
            if (last) begin
              br_take_q <= take;
              sgn_q     <= f7[5] && (f3 == 3'd5) && a[1];  // sra's fill
              prev_q    <= 1'b0;
              if (is_shift) i_q <= pre;  // SPre's count (srl/sra), or 0 (SWb)
            end
          end
          if (!legal || (last && (is_ld || is_st) && misaligned)) begin
            trap_pc_o <= ResetPc | (32'(pc_q) << 2);
          end
        end
        SMem: begin
          rom_ph_q <= is_ld && req_rom && !rom_ph_q;
          if (ld_done) begin
            d_q <= req_rom ? rom_data_i : bus_rdata_i;
            i_q <= {q_q[1:0], 2'b00};  // SPre's count: the offset's pairs (0: straight to SWb)
          end
        end
        SPre: begin
          i_q <= i_q - 4'd1;
          q_q <= {fill, fill, q_q[31:2]};
          d_q <= {2'b00, d_q[31:2]};
        end
        SWb: begin
          i_q <= i_q + 4'd1;
          if (shift_q) begin
            q_q    <= {fill, fill, q_q[31:2]};
            prev_q <= q_q[1];
          end
          d_q <= {2'b00, d_q[31:2]};
          // a signed load's sign: the top bit of its last pair in size
          if (is_ld && in_sz) sgn_q <= !f3[2] && d_q[1];
        end
        default: ;
      endcase
      if (st_q == SPre && i_q == 4'd1) i_q <= '0;
      if (finish) pc_q <= rom_addr_o;
      if (st_q == SBoot || restart_i) pc_q <= '0;
    end
  end
  assign trap_o   = (st_q == STrap);
  assign retire_o = finish;
endmodule
