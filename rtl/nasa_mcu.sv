// The board's core, configuration up5k (docs/fpga.md "The board's core"): the RV32IM controller
// (nasa_mcu_cpu) runs the firmware (fpga/fw/) that executes programs and batch runs, with the
// dot-product unit (nasa_mcu_dot) for the multiply-accumulates, behind the same ports as
// nasa_top: the CSR bus with the same map and semantics (identification CSRs,
// STATUS/ERR_CODE/ERR_INDEX/LAYERS_DONE, the counters, the batch CSRs and tables), and the memory
// port (single-beat reads of one 8-byte row, strobed writes). Memory map of the controller: fpga/fw/mmio.h.
// Host CSR writes other than CTRL are ignored while a run is busy, as on the engine.
// The parameter page (one EBR) holds what the host reads and writes slowly: the RW CSRs and
// batch tables the host writes, and the values the firmware writes for the host to read
// (identification CSRs, ERR_INDEX, LAYERS_DONE, NODE_COUNT, the Macs counter). Live state
// (STATUS, ERR_CODE, TBL_ADDR, the Cycles and memory byte counters) is in registers.
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
  parameter              RomFile    = "nasa_fw.hex"
) (
`include "nasa_core_ports.svh"
);
  localparam int unsigned RomAW = $clog2(RomWords);
  localparam int unsigned PortDW = nasa_pkg::MemBytesMax * 8;  // the memory port's data fields
  localparam int unsigned PortSW = nasa_pkg::MemBytesMax;
  if (MemBytes != 8) begin : g_bad_port
    $error("nasa_mcu: MemBytes must be 8 (one 64-bit row a beat), not %0d", MemBytes);
  end
  localparam int unsigned RamWords = nasa_pkg::McuRamBytes / 4;
  localparam int unsigned OpTabN = MaxLayers * MaxChoices;
  // the memory map (hw_spec.h NASA_MCU_MAP): parameter page words, regions (address bits 31:28),
  // MMIO pages (address bits 15:12), control registers
  localparam int unsigned POpTab = nasa_pkg::McuPOpTab, PLayerK = nasa_pkg::McuPLayerK,
                          PArenaAddr = nasa_pkg::McuPArenaAddr,
                          PArenaStride = nasa_pkg::McuPArenaStride, PMacs = nasa_pkg::McuPMacs;
  localparam logic [3:0] RgGo = 4'(nasa_pkg::McuRegionGo), RgMain = 4'(nasa_pkg::McuRegionMain),
                         RgRam = 4'(nasa_pkg::McuRegionRam), RgMmio = 4'(nasa_pkg::McuRegionMmio);
  localparam logic [3:0] PgParam = 4'(nasa_pkg::McuPageParam), PgCtrl = 4'(nasa_pkg::McuPageCtrl),
                         PgNode = 4'(nasa_pkg::McuPageNode), PgLeaf = 4'(nasa_pkg::McuPageLeaf),
                         PgCorrect = 4'(nasa_pkg::McuPageCorrect), PgDot = 4'(nasa_pkg::McuPageDot);
  localparam logic [3:0] CFinish = 4'(nasa_pkg::McuCFinish),
                         CLayerEnd = 4'(nasa_pkg::McuCLayerEnd),
                         CNodeCount = 4'(nasa_pkg::McuCNodeCount),
                         CLeafCount = 4'(nasa_pkg::McuCLeafCount);

  // ======================= the core and its ROM =======================
  logic [RomAW-1:0] rom_addr;
  logic [31:0] rom_data;
  logic [31:0] rom_q [RomWords];
  initial $readmemh(RomFile, rom_q);
  always_ff @(posedge clk_i) rom_data <= rom_q[rom_addr];

  logic bus_req, bus_we, bus_rom, bus_done, trap, restart;
  logic [31:0] bus_addr, bus_wdata, bus_rdata, trap_pc;
  logic [3:0] bus_wstrb;

  nasa_mcu_cpu #(
    .ResetPc (32'h4000_0000),
    .RomWords(RomWords)
  ) u_cpu (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .restart_i  (restart),
    .rom_addr_o (rom_addr),
    .rom_data_i (rom_data),
    .bus_req_o  (bus_req),
    .bus_we_o   (bus_we),
    .bus_addr_o (bus_addr),
    .bus_wdata_o(bus_wdata),
    .bus_wstrb_o(bus_wstrb),
    .bus_rom_o  (bus_rom),
    .bus_done_i (bus_done),
    .bus_rdata_i(bus_rdata),
    .trap_o     (trap),
    .trap_pc_o  (trap_pc),
    .retire_o   ()
  );
  // (word accesses; RAM: 512 words; the engine's parameters: the firmware has its own copy of
  // the configuration, nasa_hw.h)

  // ======================= the core's data bus =======================
  // regions (bits 31:28): GO, main memory, RAM, registers and tables (page: bits 15:12)
  logic [3:0] region;
  logic [3:0] page;
  logic [9:0] widx;   // MMIO/RAM: word index
  assign region = bus_addr[31:28];
  assign page   = bus_addr[15:12];
  assign widx   = bus_addr[11:2];
  logic unused_cpu;
  assign unused_cpu = ^{bus_rom, trap_pc, bus_addr[1:0], widx[9], 32'(RqLanes), 32'(DmaInflight),
                        32'(WTiles), 32'(Rows), 32'(Cols), 32'(BurstMax), 32'(InBufBytes),
                        32'(KredMax), 32'(MaxLayers * MaxChoices)};
  logic main_acc, int_acc, go_acc, mmio;
  logic [1:0] go_q;  // GO: the run the host started (bit 0 program, bit 1 batch)
  assign main_acc = bus_req && (region == RgMain);
  assign go_acc   = bus_req && (region == RgGo);
  assign int_acc  = bus_req && (region != RgGo) && (region != RgMain);
  assign mmio     = int_acc && (region == RgMmio);

  // ---- the dot-product unit: owns the memory port while it runs
  logic dot_busy, dot_we;
  logic [31:0] dot_acc;
  logic dot_req_valid;
  logic [AddrBits-1:0] dot_req_addr;
  assign dot_we = mmio && bus_we && (page == PgDot) && !dot_busy;
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
    mem_req_o.we        = !dot_busy && bus_we;
    mem_req_o.addr      = dot_busy ? 32'(dot_req_addr) : {4'd0, bus_addr[27:3], 3'b000};
    mem_req_o.wdata     = PortDW'({2{bus_wdata}});
    mem_req_o.wstrb     = PortSW'(cpu_strb);
    mem_req_o.rsp_ready = 1'b1;
  end

  // internal RAM, registers and tables: a write completes in its first cycle, a read in its
  // second; a core access of the parameter page or a table the host uses this cycle, and of the
  // dot unit while it runs, waits
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

  // ======================= RAM =======================
  // (no_rw_check: the word read in a store's cycle is never used, so Yosys need not make a read
  // that meets a write give the old word: 59 LUTs fewer on the board)
  (* no_rw_check *) logic [31:0] ram_q [RamWords];
  logic [31:0] ram_rd_q;
  always_ff @(posedge clk_i) begin
    for (int b = 0; b < 4; b++) begin
      if (int_acc && bus_we && region == RgRam && bus_wstrb[b]) begin
        ram_q[widx[8:0]][b*8 +: 8] <= bus_wdata[b*8 +: 8];
      end
    end
    ram_rd_q <= ram_q[widx[8:0]];
  end

  // ======================= host CSRs, control registers, tables =======================
  localparam int unsigned NCW = $clog2(NodeCap + 1), LCW = $clog2(MaxCands + 1);
  logic busy_q, done_q, error_q, run_q;
  logic [7:0] err_code_q;
  logic [NCW-1:0] node_count_q;
  logic [LCW-1:0] leaf_count_q;
  logic [31:0] tbl_addr_q;
  logic [63:0] cycles_q, wr_bytes_q;
  logic [60:0] rd_rows_q;  // rows read (8 bytes each)

  logic hwr, hrd;
  assign hwr = csr_req_i.valid && csr_req_i.we;
  assign hrd = csr_req_i.valid && !csr_req_i.we;

  logic is_start, is_ctrl, is_tbl_data;
  logic [7:0] tbl_sel;
  logic [23:0] tbl_idx;
  assign is_ctrl     = (csr_req_i.addr == 12'(nasa_pkg::CsrCtrl));
  assign is_start    = hwr && is_ctrl && !busy_q &&
                       (csr_req_i.wdata[nasa_pkg::CtrlStartBit] || csr_req_i.wdata[nasa_pkg::CtrlBatchBit]);
  assign is_tbl_data = csr_req_i.valid && (csr_req_i.addr == 12'(nasa_pkg::CsrTblData));
  assign tbl_sel     = tbl_addr_q[31:24];
  assign tbl_idx     = tbl_addr_q[23:0];

  // RW CSRs: the host writes them into the parameter page. Decoded from a constant mask of
  // the 64 words below the counters (a table lookup, no compare chain on the host's address)
  localparam logic [63:0] RwMask =
      ((64'd1 << (nasa_pkg::CsrParentCount / 4 + 1)) - (64'd1 << (nasa_pkg::CsrNumLayers / 4))) |
      (64'd1 << (nasa_pkg::CsrDescAddr / 4)) | (64'd1 << (nasa_pkg::CsrDescCount / 4)) |
      (64'd1 << (nasa_pkg::CsrWinBase / 4)) | (64'd1 << (nasa_pkg::CsrWinLimit / 4)) |
      (64'd1 << (nasa_pkg::CsrScratchStride / 4));
  logic low_csr;  // a word address below the counters
  assign low_csr = (csr_req_i.addr[11:8] == 4'd0) && (csr_req_i.addr[1:0] == 2'd0);
  logic rw_csr;
  assign rw_csr = low_csr && RwMask[csr_req_i.addr[7:2]];
  // CSRs the host reads from the page: every address below the counters but the live ones
  // (their words are the RW CSRs' and what the firmware writes; the others stay 0), and Macs
  logic page_csr;
  logic [7:0] page_csr_word;
  always_comb begin
    page_csr      = 1'b0;
    page_csr_word = 8'(csr_req_i.addr[7:2]);
    unique case (csr_req_i.addr)
      12'(nasa_pkg::CsrStatus), 12'(nasa_pkg::CsrErrCode), 12'(nasa_pkg::CsrTblAddr),
      12'(nasa_pkg::CsrTblData): page_csr = 1'b0;
      12'(nasa_pkg::CsrCounterBase + 8 * nasa_pkg::CntMacs): begin
        page_csr      = 1'b1;
        page_csr_word = 8'(PMacs);
      end
      12'(nasa_pkg::CsrCounterBase + 8 * nasa_pkg::CntMacs + 4): begin
        page_csr      = 1'b1;
        page_csr_word = 8'(PMacs + 1);
      end
      default: page_csr = (csr_req_i.addr[11:8] == 4'd0);  // (below CsrCounterBase, 0x100)
    endcase
  end
  logic [31:0] win_wdata;
  if (AddrBits < 32) begin : g_clamp
    assign win_wdata = (csr_req_i.wdata > 32'(1 << AddrBits)) ? 32'(1 << AddrBits) : csr_req_i.wdata;
  end else begin : g_noclamp
    assign win_wdata = csr_req_i.wdata;
  end
  // TBL_ADDR: the host writes it when idle; a TBL_DATA access advances its index
  logic tbl_wr, tbl_inc;
  assign tbl_wr  = hwr && !busy_q && csr_req_i.addr == 12'(nasa_pkg::CsrTblAddr);
  assign tbl_inc = is_tbl_data && (hwr ? !busy_q : 1'b1);
  logic [31:0] tbl_addr_d;
  always_comb begin
    tbl_addr_d = tbl_addr_q;
    if (tbl_wr) tbl_addr_d = csr_req_i.wdata;
    else if (tbl_inc) tbl_addr_d = {tbl_sel, tbl_idx + 24'd1};
  end
  // the entry at TBL_ADDR, if a writable table's, and its page word: registered from the next
  // TBL_ADDR (no index compare in front of the page's ports and the core's bus), each case
  // without a long chain: a written index against the table's size, an advanced one as
  // idx < size - 1 (or the wrap to 0)
  function automatic logic [8:0] tbl_size(logic [7:0] sel);
    unique case (sel)
      8'(nasa_pkg::TblOpTab):       tbl_size = 9'(OpTabN);
      8'(nasa_pkg::TblLayerK):      tbl_size = 9'(MaxLayers);
      8'(nasa_pkg::TblArenaAddr):   tbl_size = 9'(MaxLayers + 1);
      8'(nasa_pkg::TblArenaStride): tbl_size = 9'(MaxLayers + 1);
      default:                      tbl_size = 9'd0;
    endcase
  endfunction
  function automatic logic [7:0] tbl_base(logic [7:0] sel);
    unique case (sel)
      8'(nasa_pkg::TblOpTab):       tbl_base = 8'(POpTab);
      8'(nasa_pkg::TblLayerK):      tbl_base = 8'(PLayerK);
      8'(nasa_pkg::TblArenaAddr):   tbl_base = 8'(PArenaAddr);
      8'(nasa_pkg::TblArenaStride): tbl_base = 8'(PArenaStride);
      default:                      tbl_base = 8'd0;
    endcase
  endfunction
  logic tbl_wr_ok, tbl_ok_d;
  logic [7:0] tbl_word, tbl_word_d;
  logic [8:0] size_w, size_q;
  assign size_w = tbl_size(csr_req_i.wdata[31:24]);
  assign size_q = tbl_size(tbl_sel);
  always_comb begin
    if (tbl_wr) begin
      tbl_ok_d = (size_w != '0) && (csr_req_i.wdata[23:9] == '0) && (csr_req_i.wdata[8:0] < size_w);
    end else if (tbl_inc) begin
      tbl_ok_d = (size_q != '0) &&
                 (((tbl_idx[23:9] == '0) && (tbl_idx[8:0] < size_q - 9'd1)) || (&tbl_idx));
    end else begin
      tbl_ok_d = tbl_wr_ok;
    end
    tbl_word_d = tbl_base(tbl_addr_d[31:24]) + tbl_addr_d[7:0];
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      tbl_wr_ok <= 1'b0;
      tbl_word  <= '0;
    end else begin
      tbl_wr_ok <= tbl_ok_d;
      tbl_word  <= tbl_word_d;
    end
  end

  // the parameter page: host writes when idle, core writes; host reads. A core access in a cycle
  // the host reads or writes the page waits, so a read never meets a write (no_rw_check: Yosys
  // need not make that case give the old word)
  (* no_rw_check *) logic [31:0] pp_q [256];
  logic [31:0] pp_rd_q;
  logic pp_we_h, pp_we_c, host_pp_rd;
  logic [7:0] pp_waddr, pp_raddr;
  logic [31:0] pp_wdata;
  always_comb begin
    pp_we_h  = 1'b0;
    pp_waddr = csr_req_i.addr[9:2];
    pp_wdata = csr_req_i.wdata;
    if (hwr && !busy_q && rw_csr) begin
      pp_we_h = 1'b1;
      if (csr_req_i.addr == 12'(nasa_pkg::CsrWinBase) || csr_req_i.addr == 12'(nasa_pkg::CsrWinLimit)) begin
        pp_wdata = win_wdata;
      end
    end else if (hwr && !busy_q && is_tbl_data && tbl_wr_ok) begin
      pp_we_h  = 1'b1;
      pp_waddr = tbl_word;
      pp_wdata = (tbl_sel == 8'(nasa_pkg::TblLayerK)) ? {24'd0, csr_req_i.wdata[7:0]} : csr_req_i.wdata;
    end
    pp_we_c = mmio && bus_we && (page == PgParam) && !pp_we_h && !host_pp_rd;
    if (pp_we_c) begin
      pp_waddr = widx[7:0];
      pp_wdata = bus_wdata;
    end
  end
  assign host_pp_rd = hrd && (page_csr || (is_tbl_data && tbl_wr_ok));
  assign pp_raddr   = !host_pp_rd ? widx[7:0] : (is_tbl_data ? tbl_word : page_csr_word);
  always_ff @(posedge clk_i) begin
    if (pp_we_h || pp_we_c) pp_q[pp_waddr] <= pp_wdata;
    pp_rd_q <= pp_q[pp_raddr];
  end

  // result tables: written by the core, read by the core (Node, Correct) and the host. Node and
  // Correct are one RAM, Correct in its upper half: one read port, one read register and one
  // input of each read multiplexer (the host's TBL_DATA read and the core's never share a cycle).
  // A core access of a table in the cycle of a host TBL_DATA read waits, so no read meets a
  // write (no_rw_check)
  localparam int unsigned NW = $clog2(NodeCap), LW = $clog2(MaxCands);
  (* no_rw_check *) logic [31:0] nc_q [1 << (NW + 1)];
  (* no_rw_check *) logic [15:0] leaf_q [MaxCands];
  logic [31:0] nc_rd_q;
  logic [15:0] leaf_rd_q;
  logic core_wr, nc_we, leaf_we;
  assign core_wr = mmio && bus_we;
  logic host_tbl_rd, nc_hi_r;
  assign host_tbl_rd = hrd && is_tbl_data;
  assign nc_hi_r     = host_tbl_rd ? (tbl_sel == 8'(nasa_pkg::TblCorrect)) : (page == PgCorrect);
  assign nc_we       = core_wr && !host_tbl_rd && (page == PgNode || page == PgCorrect);
  assign leaf_we     = core_wr && !host_tbl_rd && (page == PgLeaf);
  always_ff @(posedge clk_i) begin
    if (nc_we) nc_q[{page == PgCorrect, NW'(widx)}] <= bus_wdata;
    if (leaf_we) leaf_q[LW'(widx)] <= bus_wdata[15:0];
    nc_rd_q <= nc_q[{nc_hi_r, host_tbl_rd ? NW'(tbl_idx) : NW'(widx)}];
    if (host_tbl_rd) leaf_rd_q <= leaf_q[LW'(tbl_idx)];
  end
  always_comb begin
    blocked = 1'b0;
    if (mmio) begin
      unique case (page)
        PgParam: blocked = pp_we_h || host_pp_rd;
        PgNode, PgCorrect, PgLeaf: blocked = host_tbl_rd;
        PgDot: blocked = dot_busy;
        default: ;
      endcase
    end
  end

  // control registers, GO
  logic ctrl_wr;
  logic [3:0] ctrl_k;
  assign ctrl_wr = core_wr && page == PgCtrl;
  assign ctrl_k  = widx[3:0];
  assign go_done = (go_q != '0);
  assign restart = trap;  // a firmware fault: the run ends with Fault, the core starts again

  logic [2:0] wr_count;  // bytes of a store on the memory port
  assign wr_count = 3'(bus_wstrb[0]) + 3'(bus_wstrb[1]) + 3'(bus_wstrb[2]) + 3'(bus_wstrb[3]);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q       <= 1'b0;
      done_q       <= 1'b0;
      error_q      <= 1'b0;
      run_q        <= 1'b0;
      go_q         <= '0;
      err_code_q   <= '0;
      node_count_q <= '0;
      leaf_count_q <= '0;
      tbl_addr_q   <= '0;
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
      tbl_addr_q <= tbl_addr_d;
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
          CNodeCount: node_count_q <= NCW'(bus_wdata);
          CLeafCount: leaf_count_q <= LCW'(bus_wdata);
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
    else if (run_q) cycles_q <= cycles_q + 64'd1;
    if (is_start) rd_rows_q <= '0;
    else if (busy_q && mem_rsp_i.valid) rd_rows_q <= rd_rows_q + 61'd1;
    if (is_start) wr_bytes_q <= '0;
    else if (busy_q && mem_req_o.valid && mem_rsp_i.ready && mem_req_o.we) begin
      wr_bytes_q <= wr_bytes_q + 64'(wr_count);
    end
  end
  assign busy_o      = busy_q;
  assign done_o      = done_q;
  assign error_o     = error_q;
  assign layer_end_o = ctrl_wr && (ctrl_k == CLayerEnd);  // the LAYER_END write (see the harness)

  // the core's reads of internal memory (valid in their second cycle)
  logic [3:0] rd_region_q, rd_page_q;
  always_ff @(posedge clk_i) begin
    rd_region_q <= region;
    rd_page_q   <= page;
  end
  always_comb begin
    int_rdata = '0;
    if (rd_region_q == RgRam) begin
      int_rdata = ram_rd_q;
    end else if (rd_region_q == RgMmio) begin
      unique case (rd_page_q)
        PgParam: int_rdata = pp_rd_q;
        PgNode, PgCorrect: int_rdata = nc_rd_q;
        PgDot: int_rdata = dot_acc;
        default: ;
      endcase
    end
  end

  // ======================= host reads (data the cycle after the request) =======================
  typedef enum logic [1:0] {HrReg, HrPage, HrNc, HrLeaf} hr_e;  // (HrNc: Node or Correct)
  hr_e hr_q, hr_d;
  logic [31:0] hr_val_q, hr_val;
  logic hr_rvalid_q;
  logic idx_in_nodes, idx_in_leaves;
  assign idx_in_nodes  = (tbl_idx[23:NCW] == '0) && (tbl_idx[NCW-1:0] < node_count_q);
  assign idx_in_leaves = (tbl_idx[23:LCW] == '0) && (tbl_idx[LCW-1:0] < leaf_count_q);
  always_comb begin
    hr_d   = HrReg;
    hr_val = '0;
    if (is_tbl_data) begin
      unique case (tbl_sel)
        8'(nasa_pkg::TblNode), 8'(nasa_pkg::TblCorrect): hr_d = idx_in_nodes ? HrNc : HrReg;
        8'(nasa_pkg::TblLeaf):    hr_d = idx_in_leaves ? HrLeaf : HrReg;
        default:                  hr_d = tbl_wr_ok ? HrPage : HrReg;
      endcase
    end else if (page_csr) begin
      hr_d = HrPage;
    end else begin
      unique case (csr_req_i.addr)
        12'(nasa_pkg::CsrStatus):  hr_val = {29'd0, error_q, done_q, busy_q};
        12'(nasa_pkg::CsrErrCode): hr_val = {24'd0, err_code_q};
        12'(nasa_pkg::CsrTblAddr): hr_val = tbl_addr_q;
        12'(nasa_pkg::CsrCounterBase + 8 * nasa_pkg::CntCycles):          hr_val = cycles_q[31:0];
        12'(nasa_pkg::CsrCounterBase + 8 * nasa_pkg::CntCycles + 4):      hr_val = cycles_q[63:32];
        12'(nasa_pkg::CsrCounterBase + 8 * nasa_pkg::CntDramRdBytes):     hr_val = {rd_rows_q[28:0], 3'b000};
        12'(nasa_pkg::CsrCounterBase + 8 * nasa_pkg::CntDramRdBytes + 4): hr_val = rd_rows_q[60:29];
        12'(nasa_pkg::CsrCounterBase + 8 * nasa_pkg::CntDramWrBytes):     hr_val = wr_bytes_q[31:0];
        12'(nasa_pkg::CsrCounterBase + 8 * nasa_pkg::CntDramWrBytes + 4): hr_val = wr_bytes_q[63:32];
        default: hr_val = '0;
      endcase
    end
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      hr_rvalid_q <= 1'b0;
      hr_q        <= HrReg;
      hr_val_q    <= '0;
    end else begin
      hr_rvalid_q <= hrd;
      hr_q        <= hr_d;
      hr_val_q    <= hr_val;
    end
  end
  always_comb begin
    csr_rsp_o.ready = 1'b1;
    csr_rsp_o.valid = hr_rvalid_q;
    unique case (hr_q)
      HrPage: csr_rsp_o.rdata = pp_rd_q;
      HrNc:   csr_rsp_o.rdata = nc_rd_q;
      HrLeaf: csr_rsp_o.rdata = {16'd0, leaf_rd_q};
      default: csr_rsp_o.rdata = hr_val_q;
    endcase
  end

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them): the
  // guards that make no_rw_check safe. No RAM marked so is written in a cycle whose read (the
  // host's, or a core load that does not wait) is used: on the chip that read's word would be
  // undefined.
  logic core_rd_ok;
  assign core_rd_ok = mmio && !bus_we && !blocked;
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (pp_we_h || pp_we_c) |-> !(host_pp_rd || (core_rd_ok && page == PgParam)))
    else $error("nasa_mcu: the parameter page is written in the cycle a read of it is used");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   nc_we |->
                   !(host_tbl_rd || (core_rd_ok && (page == PgNode || page == PgCorrect))))
    else $error("nasa_mcu: the Node/Correct table is written in the cycle a read of it is used");
  assert property (@(posedge clk_i) disable iff (!rst_ni) leaf_we |-> !host_tbl_rd)
    else $error("nasa_mcu: the Leaf table is written in the cycle the host reads it");
`endif
endmodule
