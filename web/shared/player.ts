/**
 * The playback clock shared by every run on the page: simulated time advancing at `speed` times real time while
 * playing, looping or stopping at the end. While more data is coming (a run in progress, the demo computing) the
 * clock waits at the end instead.
 */

export const SPEEDS = [0.1, 0.25, 0.5, 1, 2, 4] as const;

export class Player {
  time = 0;
  playing = false;
  speed = 1;
  loop = true;
  private last: number | null = null;
  private readonly listeners: ((t: number) => void)[] = [];

  /**
   * `end()`: the last time there is something to show; `growing()`: true while more will come.
   */
  constructor(
    private readonly end: () => number,
    private readonly growing: () => boolean,
  ) {
    const tick = (now: number) => {
      if (this.playing) {
        const dt = this.last === null ? 0 : (now - this.last) / 1000;
        this.advance(dt * this.speed);
      }
      this.last = now;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }

  onTime(listener: (t: number) => void): void {
    this.listeners.push(listener);
  }

  play(): void {
    if (!this.growing() && this.time >= this.end()) this.time = 0;
    this.playing = true;
    this.emit();
  }

  pause(): void {
    this.playing = false;
    this.emit();
  }

  toggle(): void {
    if (this.playing) this.pause();
    else this.play();
  }

  seek(t: number): void {
    this.time = Math.min(Math.max(0, t), Math.max(0, this.end()));
    this.emit();
  }

  private advance(dt: number): void {
    const end = this.end();
    let t = this.time + dt;
    if (t > end) {
      if (this.growing()) t = end;
      else if (this.loop && end > 0) t = 0;
      else {
        t = end;
        this.playing = false;
      }
    }
    this.time = t;
    this.emit();
  }

  private emit(): void {
    for (const l of this.listeners) l(this.time);
  }
}
