// Dot-product unit of the `fpga` configuration's controller (docs/fpga.md "The board's core"):
// the firmware sets it up through six registers and it reads the int8 operands from main memory
// itself, one multiply-accumulate a cycle while both operand words are at hand. A dot product is
// `runs` runs of `n` elements; element i of run j is x[X + j*XO + i*XI] (and w[W + j*WO + i*WI]):
// the taps of a (clipped) convolution window row by row, a depthwise channel, an FC row, a
// pooling window. Modes: MAC acc += x*w, SUM acc += x, MAX acc = max(acc, x).
// Registers (word k of the unit's page; writes and reads wait while the unit is busy):
//   0 X     x address; advanced by XO after each run (rewrite it for each dot product)
//   1 W     w address; likewise by WO
//   2 SHAPE n (11:0), runs (23:16), mode (25:24: 0 MAC, 1 SUM, 2 MAX)
//   3 XSTR  XI (11:0) | XO (27:16)
//   4 WSTR  WI (11:0) | WO (27:16)
//   5 ACC   write: the initial accumulator; starts the unit. Read: the result.
// Timing (fpga/model/mcu_system.cpp replays it): the unit runs from the cycle after the ACC write.
// Each cycle of a run either takes one element (both words cached: the word caches are emptied
// at the start), or starts fetching the missing word, x first, over the memory port (one
// request, then the cycle its data arrives; the next cycle runs again). Two cycles after the
// last element the result is in ACC and the unit is idle again. While it runs the unit owns
// the memory port: the core's main-memory accesses wait.
module nasa_mcu_dot #(
  parameter int unsigned AddrBits = 17
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  // register access from the core (a write takes effect when accepted: !busy_o)
  input  logic                we_i,
  input  logic [2:0]          reg_i,
  input  logic [31:0]         wdata_i,
  output logic [31:0]         acc_o,
  output logic                busy_o,
  // memory port (single-beat reads)
  output logic                req_valid_o,
  input  logic                req_ready_i,
  output logic [AddrBits-1:0] req_addr_o,   // word aligned
  input  logic                rsp_valid_i,
  input  logic [31:0]         rsp_rdata_i
);
  localparam int unsigned AW = AddrBits;
  typedef enum logic [2:0] {DIdle, DRun, DReqX, DWaitX, DReqW, DWaitW, DDrain} dstate_e;
  localparam logic [1:0] ModeMac = 2'd0, ModeMax = 2'd2;  // (1: SUM)

  dstate_e st_q, st_d;
  logic [AW-1:0] x_q, w_q, xa_q, wa_q;   // run starts, element addresses
  logic [11:0] n_q, xi_q, xo_q, wi_q, wo_q, ni_q;
  logic [7:0] r_q, nr_q;
  logic [1:0] mode_q;
  logic [31:0] acc_q;
  logic [31:0] xw_q, ww_q;               // cached operand words
  logic [AW-3:0] xt_q, wt_q;             // their word addresses
  logic xv_q, wv_q;
  logic drain_q;

  assign busy_o = (st_q != DIdle);
  assign acc_o  = acc_q;

  logic x_hit, w_hit, take;
  assign x_hit = xv_q && (xt_q == xa_q[AW-1:2]);
  assign w_hit = (mode_q != ModeMac) || (wv_q && (wt_q == wa_q[AW-1:2]));
  assign take  = (st_q == DRun) && x_hit && w_hit;

  // memory requests: presented from the DRun cycle that finds a word missing
  logic want_x, want_w;
  assign want_x = ((st_q == DRun) && !x_hit) || (st_q == DReqX);
  assign want_w = ((st_q == DRun) && x_hit && !w_hit) || (st_q == DReqW);
  assign req_valid_o = want_x || want_w;
  assign req_addr_o  = want_x ? {xa_q[AW-1:2], 2'b00} : {wa_q[AW-1:2], 2'b00};

  // the multiply pipeline: operands registered, product registered, then accumulated
  logic signed [7:0] xb_q, wb_q;
  logic signed [15:0] pr_q;
  logic pv_q, pv2_q;
  logic [7:0] xbyte, wbyte;
  assign xbyte = xw_q[8*xa_q[1:0] +: 8];
  assign wbyte = (mode_q == ModeMac) ? ww_q[8*wa_q[1:0] +: 8] : 8'd1;
  always_ff @(posedge clk_i) begin
    xb_q <= xbyte;
    wb_q <= wbyte;
    pr_q <= (mode_q == ModeMax) ? 16'(xb_q) : xb_q * wb_q;
  end
  logic [31:0] pr_ext;
  assign pr_ext = 32'(pr_q);

  // next element: within the run, or the start of the next run
  logic run_end, last;
  assign run_end = (ni_q == 12'd1);
  assign last    = run_end && (nr_q == 8'd1);
  logic [AW-1:0] x_next, w_next;
  assign x_next = run_end ? x_q + AW'(xo_q) : xa_q + AW'(xi_q);
  assign w_next = run_end ? w_q + AW'(wo_q) : wa_q + AW'(wi_q);

  // next state: an ACC write starts the unit (DDrain at once for an empty dot product); DRun
  // takes an element or fetches the missing word, x first
  always_comb begin
    st_d = st_q;
    unique case (st_q)
      DIdle: begin
        if (we_i && (reg_i == 3'd5)) st_d = (n_q == '0 || r_q == '0) ? DDrain : DRun;
      end
      DRun: begin
        if (take) begin
          if (last) st_d = DDrain;
        end else if (!x_hit) begin
          st_d = req_ready_i ? DWaitX : DReqX;
        end else begin
          st_d = req_ready_i ? DWaitW : DReqW;
        end
      end
      DReqX: if (req_ready_i) st_d = DWaitX;
      DReqW: if (req_ready_i) st_d = DWaitW;
      DWaitX: if (rsp_valid_i) st_d = DRun;
      DWaitW: if (rsp_valid_i) st_d = DRun;
      DDrain: if (drain_q) st_d = DIdle;
      default: st_d = DIdle;
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q    <= DIdle;
      x_q     <= '0;
      w_q     <= '0;
      xa_q    <= '0;
      wa_q    <= '0;
      n_q     <= '0;
      r_q     <= '0;
      mode_q  <= ModeMac;
      xi_q    <= '0;
      xo_q    <= '0;
      wi_q    <= '0;
      wo_q    <= '0;
      ni_q    <= '0;
      nr_q    <= '0;
      acc_q   <= '0;
      xw_q    <= '0;
      ww_q    <= '0;
      xt_q    <= '0;
      wt_q    <= '0;
      xv_q    <= 1'b0;
      wv_q    <= 1'b0;
      drain_q <= 1'b0;
      pv_q    <= 1'b0;
      pv2_q   <= 1'b0;
    end else begin
      st_q  <= st_d;
      pv_q  <= take;
      pv2_q <= pv_q;
      if (pv2_q) begin
        if (mode_q != ModeMax) acc_q <= acc_q + pr_ext;
        else if ($signed(pr_ext) > $signed(acc_q)) acc_q <= pr_ext;
      end
      unique case (st_q)
        DIdle: begin
          if (we_i) begin
            unique case (reg_i)
              3'd0: x_q <= wdata_i[AW-1:0];
              3'd1: w_q <= wdata_i[AW-1:0];
              3'd2: begin
                n_q    <= wdata_i[11:0];
                r_q    <= wdata_i[23:16];
                mode_q <= wdata_i[25:24];
              end
              3'd3: begin
                xi_q <= wdata_i[11:0];
                xo_q <= wdata_i[27:16];
              end
              3'd4: begin
                wi_q <= wdata_i[11:0];
                wo_q <= wdata_i[27:16];
              end
              3'd5: begin
                acc_q <= wdata_i;
                xa_q  <= x_q;
                wa_q  <= w_q;
                ni_q  <= n_q;
                nr_q  <= r_q;
                xv_q  <= 1'b0;
                wv_q  <= 1'b0;
                if (n_q == '0 || r_q == '0) drain_q <= 1'b0;
              end
              default: ;
            endcase
          end
        end
        DRun: begin
          if (take) begin
            xa_q <= x_next;
            wa_q <= w_next;
            if (run_end) begin
              x_q  <= x_next;
              w_q  <= w_next;
              ni_q <= n_q;
              nr_q <= nr_q - 8'd1;
            end else begin
              ni_q <= ni_q - 12'd1;
            end
            if (last) drain_q <= 1'b0;
          end
        end
        DWaitX: begin
          if (rsp_valid_i) begin
            xw_q <= rsp_rdata_i;
            xt_q <= xa_q[AW-1:2];
            xv_q <= 1'b1;
          end
        end
        DWaitW: begin
          if (rsp_valid_i) begin
            ww_q <= rsp_rdata_i;
            wt_q <= wa_q[AW-1:2];
            wv_q <= 1'b1;
          end
        end
        DDrain: drain_q <= 1'b1;
        default: ;
      endcase
    end
  end

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them).
  // Memory port, valid/ready: a read waiting for ready is held, unchanged, until accepted.
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (req_valid_o && !req_ready_i) |=> (req_valid_o && $stable(req_addr_o)))
    else $error("nasa_mcu_dot: request changed or withdrawn while stalled");
  // FSM legality (rsp_valid_i is the shared port's: it also carries the core's read data).
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   st_q inside {DIdle, DRun, DReqX, DWaitX, DReqW, DWaitW, DDrain})
    else $error("nasa_mcu_dot: illegal state %0d", st_q);
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({we_i, req_valid_o, req_ready_i, rsp_valid_i}))
    else $error("nasa_mcu_dot: X on a control signal");
`endif
endmodule
