// The board's core, configuration up5k (docs/fpga.md "The board's core"): a RISC-V controller
// runs the firmware (fpga/fw/) that executes programs and batch runs. Array = 1 (the board): the
// bit-serial RV32I core (nasa_mcu_cpu_serial) and the MAC array (nasa_mcu_array_page; docs/fpga.md
// "The array in the controller"), firmware nasa_fw_array; Array = 0: the RV32IM core (nasa_mcu_cpu)
// and the one-MAC dot-product unit (nasa_mcu_dot), firmware nasa_fw. Both behind the same ports
// as nasa_top: the CSR bus and the memory port (single-beat reads of one 8-byte row, strobed
// writes). Memory map of the controller: fpga/fw/mmio.h. The CSR port serves the live CSRs
// (CTRL, STATUS, ERR_CODE, the Cycles and memory byte counters); the others, with the batch
// tables, are words of the host page at the top of main memory, which the host reaches over its
// memory port (nasa/mcu_page.h gives the host the engine's CSR semantics over it) and the
// firmware as memory. The firmware's variables and stack are main memory's last bytes, above
// the host page (the board's bridge keeps the host out of them). A host CTRL write other than
// CLEAR does nothing while a run is busy.
module nasa_mcu #(
  parameter int unsigned Rows       = 4,
  parameter int unsigned Cols       = 4,
  parameter int unsigned MemBytes   = 8,
  parameter int unsigned InBufBytes = 2048,
  parameter int unsigned KredMax    = 256,
  parameter int unsigned BurstMax   = 8,
  parameter int unsigned NodeCap    = 256,
  parameter int unsigned MaxLayers  = 8,
  parameter int unsigned MaxChoices = 8,
  parameter int unsigned MaxCands   = 256,
  parameter int unsigned AddrBits   = 17,
  // (the engine's parameters: configurations pass every column of their row)
  parameter int unsigned RqLanes    = 1,
  parameter int unsigned DmaInflight = 8,
  parameter int unsigned WTiles     = 2,
  parameter int unsigned RomWords   = nasa_pkg::McuRomBytes / 4,  // the firmware ROM
  parameter              RomFile    = "nasa_fw_array.hex",  // (Array = 0: nasa_fw.hex)
  // 1 (the board): the MAC array (nasa_mac_array, MMIO page PageArray) and the bit-serial core
  // (nasa_mcu_cpu_serial, RV32I); 0: the dot unit and the RV32IM core in their place
  parameter bit          Array      = 1'b1,
  parameter bit          Primitive  = 1'b1   // Array: its DSPs as SB_MAC16 (0: in fabric, lint)
) (
`include "nasa_core_ports.svh"
);
  localparam int unsigned RomAW = $clog2(RomWords);
  localparam int unsigned PortDW = nasa_pkg::MemBytesMax * 8;  // the memory port's data fields
  localparam int unsigned PortSW = nasa_pkg::MemBytesMax;
  if (MemBytes != 8) begin : g_bad_port
    $error("nasa_mcu: MemBytes must be 8 (one 64-bit row a beat), not %0d", MemBytes);
  end
  // the memory map (hw_spec.h NASA_MCU_MAP): regions (address bits 31:28), MMIO pages (address
  // bits 15:12), control registers
  localparam logic [3:0] RgGo = 4'(nasa_pkg::McuRegionGo), RgMain = 4'(nasa_pkg::McuRegionMain),
                         RgMmio = 4'(nasa_pkg::McuRegionMmio);
  localparam logic [3:0] PgCtrl = 4'(nasa_pkg::McuPageCtrl);
  // the dot unit's page, or the array's: the unit that owns the memory port while it runs
  localparam logic [3:0] PgDot = Array ? 4'(nasa_pkg::McuPageArray) : 4'(nasa_pkg::McuPageDot);
  localparam logic [3:0] CFinish = 4'(nasa_pkg::McuCFinish),
                         CLayerEnd = 4'(nasa_pkg::McuCLayerEnd);

  // ======================= the core and its ROM =======================
  logic [RomAW-1:0] rom_addr;
  logic [31:0] rom_data;
  logic [31:0] rom_q [RomWords];
  initial $readmemh(RomFile, rom_q);
  always_ff @(posedge clk_i) rom_data <= rom_q[rom_addr];

  logic bus_req, bus_we, bus_rom, bus_done, trap, restart;
  logic [31:0] bus_addr, bus_wdata, bus_rdata, trap_pc;
  logic [3:0] bus_wstrb;

  // (the two cores' ports are the same: nasa_mcu_cpu_ports.svh)
`define NASA_MCU_CPU_CONNECT \
      .clk_i, .rst_ni, .restart_i(restart), .rom_addr_o(rom_addr), .rom_data_i(rom_data), \
      .bus_req_o(bus_req), .bus_we_o(bus_we), .bus_addr_o(bus_addr), .bus_wdata_o(bus_wdata), \
      .bus_wstrb_o(bus_wstrb), .bus_rom_o(bus_rom), .bus_done_i(bus_done), \
      .bus_rdata_i(bus_rdata), .trap_o(trap), .trap_pc_o(trap_pc), .retire_o()
  if (Array) begin : g_serial
    nasa_mcu_cpu_serial #(.ResetPc(32'h4000_0000), .RomWords(RomWords)) u_cpu (
      `NASA_MCU_CPU_CONNECT
    );
  end else begin : g_multicycle
    nasa_mcu_cpu #(.ResetPc(32'h4000_0000), .RomWords(RomWords)) u_cpu (
      `NASA_MCU_CPU_CONNECT
    );
  end
`undef NASA_MCU_CPU_CONNECT
  // (word accesses; the engine's parameters: the firmware has its own copy of the configuration,
  // nasa_hw.h)

  // ======================= the core's data bus =======================
  // regions (bits 31:28): GO, main memory, registers (page: bits 15:12); elsewhere reads 0
  logic [3:0] region;
  logic [3:0] page;
  logic [3:0] widx;   // MMIO: word index (registers 0-15 of a page)
  assign region = bus_addr[31:28];
  assign page   = bus_addr[15:12];
  assign widx   = bus_addr[5:2];
  logic unused_cpu;
  assign unused_cpu = ^{bus_rom, trap_pc, bus_addr[1:0], bus_addr[11:6], 32'(RqLanes),
                        32'(DmaInflight), 32'(WTiles), 32'(Rows), 32'(Cols), 32'(BurstMax), 32'(InBufBytes),
                        32'(KredMax), 32'(MaxLayers * MaxChoices), 32'(NodeCap), 32'(MaxCands)};
  logic main_acc, int_acc, go_acc, mmio;
  logic [1:0] go_q;  // GO: the run the host started (bit 0 program, bit 1 batch)
  assign main_acc = bus_req && (region == RgMain);
  assign go_acc   = bus_req && (region == RgGo);
  assign int_acc  = bus_req && (region != RgGo) && (region != RgMain);
  assign mmio     = int_acc && (region == RgMmio);

  // ---- the dot-product unit or the MAC array: owns the memory port while it runs
  logic dot_busy, dot_we, unit_we;
  logic [31:0] dot_acc;
  logic dot_req_valid;
  logic [AddrBits-1:0] dot_req_addr;
  logic [63:0] unit_wdata;
  logic [7:0] unit_wstrb;
  assign dot_we = mmio && bus_we && (page == PgDot) && !dot_busy;
  if (Array) begin : g_array
    nasa_mcu_array_page #(.Primitive(Primitive), .AddrBits(AddrBits)) u_array (
      .clk_i, .rst_ni, .we_i(dot_we), .reg_i(widx[2:0]), .wdata_i(bus_wdata),
      .err_o(dot_acc), .busy_o(dot_busy),
      .req_valid_o(dot_req_valid), .req_ready_i(mem_rsp_i.ready), .req_we_o(unit_we),
      .req_addr_o(dot_req_addr), .req_wdata_o(unit_wdata), .req_wstrb_o(unit_wstrb),
      .rsp_valid_i(mem_rsp_i.valid), .rsp_rdata_i(mem_rsp_i.rdata[63:0])
    );
  end else begin : g_dot
    nasa_mcu_dot #(.AddrBits(AddrBits)) u_dot (
      .clk_i      (clk_i),
      .rst_ni     (rst_ni),
      .we_i       (dot_we),
      .reg_i      (widx[2:0]),
      .wdata_i    (bus_wdata),
      .acc_o      (dot_acc),
      .busy_o     (dot_busy),
      .req_valid_o(dot_req_valid),
      .req_ready_i(mem_rsp_i.ready),
      .req_addr_o (dot_req_addr),
      .rsp_valid_i(mem_rsp_i.valid),
      .rsp_rdata_i(mem_rsp_i.rdata[63:0])
    );
    assign unit_we = 1'b0;
    assign unit_wdata = '0;
    assign unit_wstrb = '0;
  end

  // main memory through the port: a store completes when accepted, a load when its beat arrives.
  // The port's beats are 8-byte rows: the core's word is the row's half at bus_addr[2] (its
  // strobes shifted into that half, its data on both)
  logic ld_wait_q, cpu_mem;
  logic [7:0] cpu_strb;
  assign cpu_mem         = main_acc && !dot_busy;
  assign cpu_strb        = bus_addr[2] ? {bus_wstrb, 4'd0} : {4'd0, bus_wstrb};
  always_comb begin
    mem_req_o           = '0;  // single beats (MemBytes is 8: one row), read beats always taken
    mem_req_o.valid     = dot_busy ? dot_req_valid : (cpu_mem && !ld_wait_q);
    mem_req_o.we        = dot_busy ? (Array && unit_we) : bus_we;  // (the dot unit only reads)
    mem_req_o.addr      = dot_busy ? 32'(dot_req_addr) : {4'd0, bus_addr[27:3], 3'b000};
    // (the dot unit only reads: its requests' write fields are the core's, unused)
    mem_req_o.wdata     = (Array && dot_busy) ? PortDW'(unit_wdata) : PortDW'({2{bus_wdata}});
    mem_req_o.wstrb     = (Array && dot_busy) ? PortSW'(unit_wstrb) : PortSW'(cpu_strb);
    mem_req_o.rsp_ready = 1'b1;
  end

  // registers: a write completes in its first cycle, a read in its second; a core access of the
  // dot unit while it runs waits
  logic int_rd_q, blocked;
  logic [31:0] int_rdata;
  logic go_done;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ld_wait_q <= 1'b0;
      int_rd_q  <= 1'b0;
    end else begin
      if (cpu_mem && !bus_we && !ld_wait_q && mem_rsp_i.ready) ld_wait_q <= 1'b1;
      else if (ld_wait_q && mem_rsp_i.valid) ld_wait_q <= 1'b0;
      int_rd_q <= int_acc && !bus_we && !int_rd_q && !blocked;
    end
  end
  always_comb begin
    bus_done  = 1'b0;
    bus_rdata = int_rdata;
    if (main_acc) begin
      bus_done  = cpu_mem && (bus_we ? mem_rsp_i.ready : (ld_wait_q && mem_rsp_i.valid));
      bus_rdata = bus_addr[2] ? mem_rsp_i.rdata[63:32] : mem_rsp_i.rdata[31:0];
    end else if (go_acc) begin
      bus_done  = go_done;
      bus_rdata = {30'd0, go_q};
    end else if (int_acc) begin
      bus_done  = bus_we ? !blocked : int_rd_q;
    end
  end

  // ======================= host CSRs, control registers =======================
  // The CSR port serves the live CSRs only: CTRL, STATUS, ERR_CODE and the Cycles and memory
  // byte counters. Every other CSR is a word of the host page in main memory (hw_spec.h
  // NASA_MCU_MAP PageBytes, docs/fpga.md "The host page"), which the host reads and writes
  // over its memory port and the firmware as memory; other addresses read 0, writes do nothing.
  logic busy_q, done_q, error_q, run_q;
  logic [7:0] err_code_q;
  // (hw_spec CounterBits wide, not 64: they wrap after 136 days of 24 MHz cycles; the high
  // words' top bits read 0)
  localparam int unsigned CntW = nasa_pkg::McuCounterBits;
  logic [CntW-1:0] cycles_q, wr_bytes_q;
  logic [CntW-4:0] rd_rows_q;  // rows read (8 bytes each)

  logic hwr, hrd;
  assign hwr = csr_req_i.valid && csr_req_i.we;
  assign hrd = csr_req_i.valid && !csr_req_i.we;

  logic is_start, is_ctrl;
  assign is_ctrl  = (csr_req_i.addr == 12'(nasa_pkg::CsrCtrl));
  assign is_start = hwr && is_ctrl && !busy_q &&
                    (csr_req_i.wdata[nasa_pkg::CtrlStartBit] || csr_req_i.wdata[nasa_pkg::CtrlBatchBit]);
  assign blocked = mmio && (page == PgDot) && dot_busy;

  // control registers, GO
  logic ctrl_wr;
  logic [3:0] ctrl_k;
  assign ctrl_wr = mmio && bus_we && page == PgCtrl;
  assign ctrl_k  = widx[3:0];
  assign go_done = (go_q != '0);
  assign restart = trap;  // a firmware fault: the run ends with Fault, the core starts again

  logic [3:0] wr_count, wr_add_q;  // bytes of a write on the memory port (the core's; Array:
                                   // the unit's); wr_add_q: the last cycle's taken write's
  always_comb begin
    wr_count = 4'(bus_wstrb[0]) + 4'(bus_wstrb[1]) + 4'(bus_wstrb[2]) + 4'(bus_wstrb[3]);
    if (Array && dot_busy) begin
      wr_count = 4'(unit_wstrb[0]) + 4'(unit_wstrb[1]) + 4'(unit_wstrb[2]) + 4'(unit_wstrb[3]) +
                 4'(unit_wstrb[4]) + 4'(unit_wstrb[5]) + 4'(unit_wstrb[6]) + 4'(unit_wstrb[7]);
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q       <= 1'b0;
      done_q       <= 1'b0;
      error_q      <= 1'b0;
      run_q        <= 1'b0;
      go_q         <= '0;
      err_code_q   <= '0;
    end else begin
      // host
      if (hwr && is_ctrl && csr_req_i.wdata[nasa_pkg::CtrlClearBit]) begin
        done_q     <= 1'b0;
        error_q    <= 1'b0;
        err_code_q <= '0;
      end
      if (is_start) begin
        busy_q     <= 1'b1;
        done_q     <= 1'b0;
        error_q    <= 1'b0;
        err_code_q <= '0;
        go_q       <= csr_req_i.wdata[nasa_pkg::CtrlBatchBit] ? 2'd2 : 2'd1;
      end
      if (go_acc && go_done) begin
        go_q  <= '0;
        run_q <= 1'b1;
      end
      // core
      if (ctrl_wr) begin
        unique case (ctrl_k)
          CFinish: begin
            busy_q     <= 1'b0;
            done_q     <= 1'b1;
            error_q    <= (bus_wdata[7:0] != '0);
            err_code_q <= bus_wdata[7:0];
            run_q      <= 1'b0;
          end
          default: ;
        endcase
      end
      if (trap && busy_q) begin
        busy_q     <= 1'b0;
        done_q     <= 1'b1;
        error_q    <= 1'b1;
        err_code_q <= 8'(nasa_pkg::ErrFault);
        go_q       <= '0;
        run_q      <= 1'b0;
      end
    end
  end
  // the counters (a synchronous clear only: no reset mux in front of the adders). Cycles counts
  // the cycles after the core's GO read up to its FINISH write (or trap), the byte counters what
  // moved on the memory port since the start
  always_ff @(posedge clk_i) begin
    if (is_start || (go_acc && go_done)) cycles_q <= '0;
    else if (run_q) cycles_q <= cycles_q + 1'b1;
    if (is_start) rd_rows_q <= '0;
    else if (busy_q && mem_rsp_i.valid) rd_rows_q <= rd_rows_q + 1'b1;
    // (a write's bytes reach the counter the cycle after it is taken: the strobes' count and the
    // port's handshake off the counter's adder path; the host reads the counter after the run)
    wr_add_q <= (busy_q && mem_req_o.valid && mem_rsp_i.ready && mem_req_o.we) ? wr_count : '0;
    if (is_start) wr_bytes_q <= '0;
    else wr_bytes_q <= wr_bytes_q + {{(CntW - 4){1'b0}}, wr_add_q};
  end
  assign busy_o      = busy_q;
  assign done_o      = done_q;
  assign error_o     = error_q;
  assign layer_end_o = ctrl_wr && (ctrl_k == CLayerEnd);  // the LAYER_END write (see the harness)

  // the core's register reads (valid in their second cycle): the dot unit's accumulator
  logic rd_dot_q;
  always_ff @(posedge clk_i) rd_dot_q <= (region == RgMmio) && (page == PgDot);
  assign int_rdata = rd_dot_q ? dot_acc : '0;

  // ======================= host reads (data the cycle after the request) =======================
  logic [31:0] hr_val_q, hr_val;
  logic hr_rvalid_q;
  always_comb begin
    unique case (csr_req_i.addr)
      12'(nasa_pkg::CsrStatus):  hr_val = {29'd0, error_q, done_q, busy_q};
      12'(nasa_pkg::CsrErrCode): hr_val = {24'd0, err_code_q};
      12'(nasa_pkg::CsrCounterBase + 8 * nasa_pkg::CntCycles):          hr_val = cycles_q[31:0];
      12'(nasa_pkg::CsrCounterBase + 8 * nasa_pkg::CntCycles + 4):      hr_val = 32'(cycles_q[CntW-1:32]);
      12'(nasa_pkg::CsrCounterBase + 8 * nasa_pkg::CntDramRdBytes):     hr_val = {rd_rows_q[28:0], 3'b000};
      12'(nasa_pkg::CsrCounterBase + 8 * nasa_pkg::CntDramRdBytes + 4): hr_val = 32'(rd_rows_q[CntW-4:29]);
      12'(nasa_pkg::CsrCounterBase + 8 * nasa_pkg::CntDramWrBytes):     hr_val = wr_bytes_q[31:0];
      12'(nasa_pkg::CsrCounterBase + 8 * nasa_pkg::CntDramWrBytes + 4): hr_val = 32'(wr_bytes_q[CntW-1:32]);
      default: hr_val = '0;
    endcase
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      hr_rvalid_q <= 1'b0;
      hr_val_q    <= '0;
    end else begin
      hr_rvalid_q <= hrd;
      hr_val_q    <= hr_val;
    end
  end
  always_comb begin
    csr_rsp_o.ready = 1'b1;
    csr_rsp_o.valid = hr_rvalid_q;
    csr_rsp_o.rdata = hr_val_q;
  end
endmodule
