// UART frame bridge (docs/uart.md): parses request frames from received bytes, checks them
// (command, length, CRC-16/CCITT-FALSE, address), executes memory and CSR reads and writes, and
// sends one response frame per request. Nothing is written before a whole frame has arrived with
// a matching CRC: WRITE_MEM data waits in a 256-byte buffer. After an error the bridge ignores
// the line until it has been quiet for GapCycles (the frame's tail is never taken for a new
// frame); a frame that stops arriving for GapCycles is answered TIMEOUT. A write whose sequence
// number, command and address equal the last successful write's is answered OK without being
// executed again, and a repeated READ_CSR gets the value it returned (safe host retries): what
// that takes (the last executed frame's command, sequence number and address, the last read's
// value) is kept in the WRITE_MEM buffer's EBR, and each header byte is compared with the last
// frame's as it arrives. Received bytes come at least two cycles apart (a UART's are ten bit
// times). Byte-exact with nasa::uart::BridgeModel.
module nasa_uart_bridge #(
  parameter int unsigned MemBytes  = 1 << 20,
  parameter int unsigned GapCycles = 400  // quiet clock cycles: gap byte times of the UART
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  // received bytes (a UART cannot be held off)
  input  logic        rx_valid_i,
  input  logic [7:0]  rx_data_i,
  // bytes to send
  output logic        tx_valid_o,
  input  logic        tx_ready_i,
  output logic [7:0]  tx_data_o,
  // memory byte port: a read's data comes back on mrsp_i.valid
  output nasa_pkg::byte_req_t mreq_o,
  input  nasa_pkg::byte_rsp_t mrsp_i,
  // CSR bus (the core's CSR port; addresses above its 12 bits alias)
  output nasa_pkg::csr_req_t csr_req_o,
  input  nasa_pkg::csr_rsp_t csr_rsp_i,
  // status for LEDs and tests
  output logic        busy_o,
  output logic        error_o  // pulse: a frame was rejected
);
  localparam logic [7:0] ReqSync = 8'hA5;
  localparam logic [7:0] RspSync = 8'h5A;
  localparam int unsigned QW = $clog2(GapCycles + 1);
  // memory addresses: a frame's whole range lies below MemBytes <= 2^AW, so its byte addresses
  // are computed in AW bits; its end (address + length) is checked in SW bits
  localparam int unsigned AW = (MemBytes > 1) ? $clog2(MemBytes) : 1;
  localparam int unsigned SW = ((AW > 16) ? AW : 16) + 1;
  // the address bits at or above AW (a frame with one set is outside the memory)
  localparam logic [32:0] LowMask = (33'd1 << AW) - 33'd1;
  localparam logic [31:0] HiMask = ~LowMask[31:0];
  if (MemBytes < 4096) begin : g_bad_mem
    $error("nasa_uart_bridge: MemBytes must be at least 4096 (the CSR map's 12 address bits)");
  end

  typedef enum logic [3:0] {
    BHunt, BHeader, BBody, BCheck, BLoad, BWrite, BCsr, BCsrRd, BRestore, BResp, BDrain
  } bstate_e;

  // CRC-16/CCITT-FALSE, one byte
  function automatic logic [15:0] crc_step(logic [15:0] crc, logic [7:0] b);
    logic [15:0] c;
    c = crc ^ {b, 8'h00};
    for (int i = 0; i < 8; i++) begin
      c = c[15] ? ((c << 1) ^ 16'h1021) : (c << 1);
    end
    crc_step = c;
  endfunction

  bstate_e st_q, st_d;
  logic [QW-1:0] quiet_q;          // cycles since the last received byte, saturating
  logic [8:0] cnt_q;               // bytes received after the sync in this frame
  logic [7:0] cmd_q, seq_q;
  logic [15:0] len_q;
  logic [AW-1:0] addr_q;           // the frame's address below AW bits
  logic addr_hi_q;                 // and whether a bit at or above AW is set
  logic [31:0] csr_val_q;          // WRITE_CSR value / READ_CSR result
  logic [15:0] crc_q;              // CRC of the request's bytes so far, then of the response's
  logic [7:0] rx_crc_q;            // the low byte of the frame's CRC field
  logic [2:0] status_q;
  // one EBR (no_rw_check: no read ever meets a write to its word): bytes 0-255 the WRITE_MEM
  // buffer; 256 + 8 s + i (slot s = 0, 1) byte i of a frame's header after the sync (0 cmd, 1
  // seq, 2-3 len, 4-7 addr): slot last_slot_q is the last executed write's or CSR read's, the
  // other takes the arriving frame's; 272-275 the value the last READ_CSR returned
  (* no_rw_check *) logic [7:0] buf_mem [512];
  logic [7:0] buf_rd_q;
  logic [8:0] buf_ra, buf_wa;
  logic [7:0] buf_wd;
  logic buf_we;
  logic [7:0] ptr_q;               // WRITE_MEM: next buffer byte; response: payload index
  logic last_valid_q;              // a write or CSR read has been executed
  logic last_slot_q;               // its header's slot
  logic same_q;                    // the arriving frame's cmd, seq and addr are the last's so far
  // response transmitter
  // the response goes out as header (5 bytes), payload (rsp_len_q bytes), CRC low, CRC high
  typedef enum logic [1:0] {TxHead, TxPay, TxCrcLo, TxCrcHi} tph_e;
  tph_e tph_q;
  logic [2:0] hd_q;                // header byte being sent
  logic [8:0] pay_q;               // payload byte being sent
  logic [8:0] rsp_len_q;           // (at most 256)
  logic rd_pend_q, rd_have_q;      // READ_MEM: request in flight / byte in rd_q
  logic [7:0] rd_q;

  logic quiet;
  assign quiet = (quiet_q == QW'(GapCycles));

  // header fields as bytes arrive (after the sync): 0 cmd, 1 seq, 2-3 len, 4-7 addr
  logic cmd_ok, csr_cmd, len_ok;
  assign cmd_ok  = (cmd_q >= 8'd1) && (cmd_q <= 8'd4);
  assign csr_cmd = (cmd_q == 8'd3) || (cmd_q == 8'd4);
  assign len_ok  = csr_cmd ? (len_q == 16'd4) : ((len_q != 16'd0) && (len_q <= 16'd256));

  // the body: rem_q payload bytes (counted down from the header's), then the CRC, low byte
  // first (crc_lo_q: it has come). A length past 256 is rejected before any body byte counts.
  logic [8:0] payload_len, rem_q;
  logic crc_lo_q;
  assign payload_len = (cmd_q == 8'd1) ? len_q[8:0] : (cmd_q == 8'd3) ? 9'd4 : 9'd0;
  logic crc_ok_q;  // the frame's CRC matched (BCheck decides on it the next cycle)

  logic repeat_write;
  assign repeat_write = last_valid_q && same_q;
  // addr + len <= MemBytes, registered (the header is complete at least two bytes before the
  // CRC that checks it; no compare chain in front of the response logic)
  logic addr_ok, addr_ok_q;
  assign addr_ok = !addr_hi_q && ((SW'(addr_q) + SW'(len_q)) <= SW'(MemBytes));
  always_ff @(posedge clk_i) addr_ok_q <= addr_ok;
  // an address byte arriving (header byte 4 + b): addr_q with it in place, its bits above AW
  logic [31:0] addr_w;
  logic addr_hi_b;
  always_comb begin
    addr_w = 32'(addr_q);
    addr_w[8*cnt_q[1:0] +: 8] = rx_data_i;
    addr_hi_b = (rx_data_i & HiMask[8*cnt_q[1:0] +: 8]) != '0;
  end
  logic unused_addr_w;  // (its bits at or above AW: addr_hi_b)
  assign unused_addr_w = ^addr_w;
  logic [1:0] restore_byte;  // BRestore: the byte of the read's value that has come
  assign restore_byte = ptr_q[1:0] - 2'd1;

  // response bytes: sync, status, seq, len (2), payload, crc (2)
  logic [7:0] tx_byte;
  logic in_payload;
  assign in_payload = (tph_q == TxPay);
  always_comb begin
    unique case (tph_q)
      TxHead: begin
        unique case (hd_q)
          3'd0: tx_byte = RspSync;
          3'd1: tx_byte = {5'd0, status_q};
          3'd2: tx_byte = seq_q;
          3'd3: tx_byte = rsp_len_q[7:0];
          default: tx_byte = {7'd0, rsp_len_q[8]};
        endcase
      end
      TxPay: tx_byte = (cmd_q == 8'd4) ? csr_val_q[8*pay_q[1:0] +: 8] : rd_q;  // READ_CSR, READ_MEM
      TxCrcLo: tx_byte = crc_q[7:0];
      default: tx_byte = crc_q[15:8];
    endcase
  end
  // a READ_MEM payload byte is ready to go only once it has come back from memory
  assign tx_valid_o = (st_q == BResp) &&
                      !(in_payload && (cmd_q == 8'd2) && (status_q == 3'd0) && !rd_have_q);
  assign tx_data_o  = tx_byte;
  logic tx_fire;
  assign tx_fire = tx_valid_o && tx_ready_i;

  // memory port: WRITE_MEM writes in BWrite; READ_MEM reads while the response goes out
  assign mreq_o.valid = (st_q == BWrite) ||
                        ((st_q == BResp) && (cmd_q == 8'd2) && (status_q == 3'd0) && in_payload &&
                         !rd_pend_q && !rd_have_q);
  assign mreq_o.we    = (st_q == BWrite);
  logic [AW-1:0] maddr;  // (in AW bits: the frame's range lies below MemBytes)
  assign maddr        = addr_q[AW-1:0] + ((st_q == BWrite) ? AW'(ptr_q) : AW'(pay_q));
  assign mreq_o.addr  = 32'(maddr);
  assign mreq_o.wdata = buf_rd_q;

  assign csr_req_o.valid = (st_q == BCsr);
  assign csr_req_o.we    = (cmd_q == 8'd3);
  assign csr_req_o.addr  = addr_q[11:0];  // (MemBytes >= 4096)
  assign csr_req_o.wdata = csr_val_q;

  assign busy_o = (st_q != BHunt);

  // the EBR. Written: a header's bytes into the free slot as they arrive, WRITE_MEM payload
  // bytes into the buffer, a READ_CSR's value as its response sends it. Read: the last slot's
  // header byte the next arriving byte is compared with (the read a cycle ahead), the buffer one
  // byte ahead in BLoad, the last READ_CSR's value in BRestore (a repeated READ_CSR)
  localparam logic [8:0] RdVal = 9'd272;
  always_comb begin
    buf_we = 1'b0;
    buf_wa = {1'b0, 8'(cnt_q - 9'd8)};
    buf_wd = rx_data_i;
    buf_ra = {1'b0, ptr_q};
    unique case (st_q)
      BHunt: buf_ra = {1'b1, 4'd0, last_slot_q, 3'd0};
      BHeader: begin
        buf_we = rx_valid_i;
        buf_wa = {1'b1, 4'd0, !last_slot_q, cnt_q[2:0]};
        buf_ra = {1'b1, 4'd0, last_slot_q, cnt_q[2:0]};
      end
      BBody: buf_we = rx_valid_i && (cmd_q == 8'd1) && (rem_q != '0);
      BRestore: buf_ra = RdVal | 9'(ptr_q[1:0]);
      BResp: begin
        buf_we = tx_fire && in_payload && (cmd_q == 8'd4);
        buf_wa = RdVal | 9'(pay_q[1:0]);
        buf_wd = tx_byte;
      end
      default: ;
    endcase
  end
  always_ff @(posedge clk_i) begin
    if (buf_we) buf_mem[buf_wa] <= buf_wd;
    buf_rd_q <= buf_mem[buf_ra];
  end

  // one CRC step serves both directions: the request's bytes as they arrive (BHeader, BBody),
  // then the response's as they go (BResp; NASA_RESPOND starts it again)
  logic [15:0] crc_next;
  assign crc_next = crc_step(crc_q, (st_q == BResp) ? tx_byte : rx_data_i);

  // next state (each move to BResp starts a response: NASA_RESPOND below)
  always_comb begin
    st_d = st_q;
    unique case (st_q)
      BHunt: if (rx_valid_i && (rx_data_i == ReqSync)) st_d = BHeader;
      BHeader: begin
        if (rx_valid_i) begin
          if (cnt_q[2:0] == 3'd7) st_d = BBody;  // header complete: checked on the next cycle
        end else if (quiet) begin
          st_d = BResp;  // TIMEOUT
        end
      end
      BBody: begin
        if ((cnt_q == 9'd8) && (!cmd_ok || !len_ok)) begin
          st_d = BResp;  // bad command or length
        end else if (rx_valid_i) begin
          // the CRC's high byte: the frame is complete; checked in the next cycle
          if ((rem_q == '0) && crc_lo_q) st_d = BCheck;
        end else if (quiet) begin
          st_d = BResp;  // TIMEOUT
        end
      end
      BCheck: begin
        if (!crc_ok_q) begin
          st_d = BResp;  // BAD_CRC
        end else if (!csr_cmd && !addr_ok_q) begin
          st_d = BResp;  // BAD_ADDR
        end else if (cmd_q == 8'd1) begin
          st_d = repeat_write ? BResp : BLoad;
        end else if (cmd_q == 8'd2) begin
          st_d = BResp;
        end else if ((cmd_q == 8'd3) && repeat_write) begin
          st_d = BResp;
        end else if ((cmd_q == 8'd4) && repeat_write) begin
          st_d = BRestore;
        end else begin
          st_d = BCsr;
        end
      end
      BLoad: st_d = BWrite;  // buf_rd_q <= buf[ptr_q]
      BWrite: begin
        if (mrsp_i.ready) st_d = (16'(ptr_q) + 16'd1 == len_q) ? BResp : BLoad;
      end
      BCsr: if (csr_rsp_i.ready) st_d = (cmd_q == 8'd4) ? BCsrRd : BResp;
      BCsrRd: if (csr_rsp_i.valid) st_d = BResp;  // the read's data, the cycle after
      BRestore: if (ptr_q == 8'd4) st_d = BResp;
      BResp: begin
        if (tx_fire && (tph_q == TxCrcHi)) begin
          // done: after an error wait for a quiet line (a timeout has just seen one)
          st_d = ((status_q == 3'd0) || (status_q == 3'd5)) ? BHunt : BDrain;
        end
      end
      BDrain: if (quiet && !rx_valid_i) st_d = BHunt;
      default: st_d = BHunt;
    endcase
  end

  // start of a response (st_d is BResp): status (0 = OK), payload length
  `define NASA_RESPOND(STATUS, LEN) \
    begin \
      status_q  <= (STATUS); \
      rsp_len_q <= 9'(LEN); \
      tph_q     <= TxHead; \
      hd_q      <= '0; \
      pay_q     <= '0; \
      crc_q     <= 16'hFFFF; \
      rd_pend_q <= 1'b0; \
      rd_have_q <= 1'b0; \
    end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q         <= BHunt;
      quiet_q      <= QW'(GapCycles);
      cnt_q        <= '0;
      cmd_q        <= '0;
      seq_q        <= '0;
      len_q        <= '0;
      addr_q       <= '0;
      csr_val_q    <= '0;
      crc_q        <= 16'hFFFF;
      rx_crc_q     <= '0;
      rem_q        <= '0;
      crc_lo_q     <= 1'b0;
      crc_ok_q     <= 1'b0;
      status_q     <= '0;
      ptr_q        <= '0;
      addr_hi_q    <= 1'b0;
      last_valid_q <= 1'b0;
      last_slot_q  <= 1'b0;
      same_q       <= 1'b0;
      tph_q        <= TxHead;
      hd_q         <= '0;
      pay_q        <= '0;
      rsp_len_q    <= '0;
      rd_pend_q    <= 1'b0;
      rd_have_q    <= 1'b0;
      rd_q         <= '0;
      error_o      <= 1'b0;
    end else begin
      st_q    <= st_d;
      error_o <= 1'b0;
      if (rx_valid_i) begin
        quiet_q <= '0;
      end else if (!quiet) begin
        quiet_q <= quiet_q + QW'(1);
      end
      unique case (st_q)
        BHunt: begin
          if (rx_valid_i && (rx_data_i == ReqSync)) begin
            cnt_q  <= '0;
            crc_q  <= 16'hFFFF;
            seq_q  <= '0;
            cmd_q  <= '0;
            same_q <= 1'b1;
            addr_hi_q <= 1'b0;
          end
        end
        BHeader: begin
          if (rx_valid_i) begin
            cnt_q <= cnt_q + 9'd1;
            crc_q <= crc_next;
            // (the last frame's header byte: buf_rd_q; the length is not compared)
            if (cnt_q[2:1] != 2'd1 && rx_data_i != buf_rd_q) same_q <= 1'b0;
            if (cnt_q[2]) begin
              addr_q <= addr_w[AW-1:0];
              if (addr_hi_b) addr_hi_q <= 1'b1;
            end
            unique case (cnt_q[2:0])
              3'd0: cmd_q <= rx_data_i;
              3'd1: seq_q <= rx_data_i;
              3'd2: len_q[7:0] <= rx_data_i;
              3'd3: len_q[15:8] <= rx_data_i;
              3'd7: begin  // header complete
                rem_q    <= payload_len;
                crc_lo_q <= 1'b0;
              end
              default: ;
            endcase
          end else if (quiet) begin
            error_o <= 1'b1;
            `NASA_RESPOND(3'd5, 16'd0)  // TIMEOUT; the line was quiet for a gap: hunt afterwards
          end
        end
        BBody: begin
          // first cycle after the header: reject what cannot be a frame
          if ((cnt_q == 9'd8) && (!cmd_ok || !len_ok)) begin
            error_o <= 1'b1;
            `NASA_RESPOND(cmd_ok ? 3'd3 : 3'd2, 16'd0)
          end else begin
            if (rx_valid_i) begin
              cnt_q <= cnt_q + 9'd1;
              if (rem_q != '0) begin
                rem_q <= rem_q - 9'd1;
                crc_q <= crc_next;
                if (cmd_q == 8'd3) csr_val_q[8*(cnt_q[1:0]) +: 8] <= rx_data_i;
              end else if (!crc_lo_q) begin
                rx_crc_q <= rx_data_i;
                crc_lo_q <= 1'b1;
              end else begin
                // the CRC's high byte: the frame is complete; checked in the next cycle
                crc_ok_q <= ({rx_data_i, rx_crc_q} == crc_q);
              end
            end else if (quiet) begin
              error_o <= 1'b1;
              `NASA_RESPOND(3'd5, 16'd0)  // TIMEOUT
            end
          end
        end
        BCheck: begin  // the frame is complete: reject it, or carry it out
          if (!crc_ok_q) begin
            error_o <= 1'b1;
            `NASA_RESPOND(3'd1, 16'd0)  // BAD_CRC
          end else if (!csr_cmd && !addr_ok_q) begin
            error_o <= 1'b1;
            `NASA_RESPOND(3'd4, 16'd0)  // BAD_ADDR
          end else if (cmd_q == 8'd1) begin
            if (repeat_write) begin
              `NASA_RESPOND(3'd0, 16'd0)
            end else begin
              ptr_q <= '0;
            end
          end else if (cmd_q == 8'd2) begin
            `NASA_RESPOND(3'd0, len_q)
          end else if ((cmd_q == 8'd3) && repeat_write) begin
            `NASA_RESPOND(3'd0, 16'd0)
          end else if ((cmd_q == 8'd4) && repeat_write) begin
            ptr_q <= '0;  // BRestore: the value it returned into csr_val_q
          end
        end
        BWrite: begin
          if (mrsp_i.ready) begin
            if (16'(ptr_q) + 16'd1 == len_q) begin
              last_valid_q <= 1'b1;
              last_slot_q  <= !last_slot_q;
              `NASA_RESPOND(3'd0, 16'd0)
            end else begin
              ptr_q <= ptr_q + 8'd1;
            end
          end
        end
        BCsr: begin
          if (csr_rsp_i.ready) begin
            last_valid_q <= 1'b1;
            last_slot_q  <= !last_slot_q;
            if (cmd_q != 8'd4) `NASA_RESPOND(3'd0, 16'd0)
          end
        end
        BCsrRd: begin
          if (csr_rsp_i.valid) begin
            csr_val_q <= csr_rsp_i.rdata;  // (into the EBR as the response sends it)
            `NASA_RESPOND(3'd0, 16'd4)
          end
        end
        BRestore: begin  // the EBR's byte ptr_q - 1 has come
          ptr_q <= ptr_q + 8'd1;
          if (ptr_q != '0) csr_val_q[8*restore_byte +: 8] <= buf_rd_q;
          if (ptr_q == 8'd4) `NASA_RESPOND(3'd0, 16'd4)
        end
        BResp: begin
          if (mreq_o.valid && mrsp_i.ready) rd_pend_q <= 1'b1;
          if (mrsp_i.valid && rd_pend_q) begin
            rd_q      <= mrsp_i.rdata;
            rd_pend_q <= 1'b0;
            rd_have_q <= 1'b1;
          end
          if (tx_fire) begin
            // (the sync byte is not in the CRC)
            if ((tph_q == TxHead && hd_q != 3'd0) || in_payload) crc_q <= crc_next;
            unique case (tph_q)
              TxHead: begin
                hd_q <= hd_q + 3'd1;
                if (hd_q == 3'd4) tph_q <= (rsp_len_q != '0) ? TxPay : TxCrcLo;
              end
              TxPay: begin
                pay_q     <= pay_q + 9'd1;
                rd_have_q <= 1'b0;
                if (pay_q + 9'd1 == rsp_len_q) tph_q <= TxCrcLo;
              end
              TxCrcLo: tph_q <= TxCrcHi;
              default: ;  // TxCrcHi: the response is complete (st_d leaves BResp)
            endcase
          end
        end
        default: ;
      endcase
    end
  end

  `undef NASA_RESPOND

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them).
  // valid/ready on the memory, CSR and transmit ports: an offer waiting for ready is held.
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (mreq_o.valid && !mrsp_i.ready) |=>
                   (mreq_o.valid && $stable({mreq_o.we, mreq_o.addr, mreq_o.wdata})))
    else $error("nasa_uart_bridge: memory request changed or withdrawn while stalled");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (csr_req_o.valid && !csr_rsp_i.ready) |=> (csr_req_o.valid && $stable(csr_req_o)))
    else $error("nasa_uart_bridge: CSR request changed or withdrawn while stalled");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (tx_valid_o && !tx_ready_i) |=> (tx_valid_o && $stable(tx_data_o)))
    else $error("nasa_uart_bridge: response byte changed or withdrawn while stalled");
  // One memory read at a time; FSM legality.
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (mreq_o.valid && !mreq_o.we) |-> !rd_pend_q)
    else $error("nasa_uart_bridge: read request while a read is outstanding");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   st_q inside {BHunt, BHeader, BBody, BCheck, BLoad, BWrite, BCsr, BCsrRd,
                                BRestore, BResp, BDrain})
    else $error("nasa_uart_bridge: illegal state %0d", st_q);
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({rx_valid_i, tx_ready_i, mrsp_i.ready, mrsp_i.valid, csr_rsp_i.ready}))
    else $error("nasa_uart_bridge: X on a control input");
  // (the header's comparison reads the last frame's byte a cycle ahead)
  assert property (@(posedge clk_i) disable iff (!rst_ni) rx_valid_i |=> !rx_valid_i)
    else $error("nasa_uart_bridge: received bytes in consecutive cycles");
`endif
endmodule
