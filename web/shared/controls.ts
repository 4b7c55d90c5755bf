/** The playback bar: play/pause, a time slider, the time, speed and loop; keyboard: space, arrows. */

import { SPEEDS, type Player } from './player.js';

export interface PlaybackBar {
  /** Call when the end time or the step between frames changes. */
  setRange(end: number, step: number): void;
}

export function playbackBar(parent: HTMLElement, player: Player, end: () => number): PlaybackBar {
  const bar = document.createElement('div');
  bar.className = 'playback';
  bar.innerHTML = `
    <button type="button" data-role="play" title="play / pause (space)">▶</button>
    <input type="range" data-role="scrub" min="0" max="1" step="0.001" value="0" aria-label="time">
    <span data-role="time" class="time">t = 0.000 s</span>
    <label>speed <select data-role="speed">${SPEEDS.map((s) => `<option value="${s}"${s === 1 ? ' selected' : ''}>${s}×</option>`).join('')}</select></label>
    <label><input type="checkbox" data-role="loop" checked> loop</label>`;
  parent.appendChild(bar);
  const $ = <T extends HTMLElement>(role: string) => bar.querySelector(`[data-role="${role}"]`) as T;
  const play = $<HTMLButtonElement>('play');
  const scrub = $<HTMLInputElement>('scrub');
  const time = $<HTMLSpanElement>('time');
  const speed = $<HTMLSelectElement>('speed');
  const loop = $<HTMLInputElement>('loop');
  let step = 0.001;
  play.addEventListener('click', () => player.toggle());
  scrub.addEventListener('input', () => {
    const t = Number(scrub.value); // read first: pausing redraws the bar at the old time
    player.pause();
    player.seek(t);
  });
  speed.addEventListener('change', () => (player.speed = Number(speed.value)));
  loop.addEventListener('change', () => (player.loop = loop.checked));
  window.addEventListener('keydown', (e) => {
    if (e.target instanceof HTMLInputElement && e.target.type !== 'range') return;
    if (e.target instanceof HTMLSelectElement) return;
    if (e.key === ' ') {
      e.preventDefault();
      player.toggle();
    } else if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
      e.preventDefault();
      player.pause();
      player.seek(player.time + (e.key === 'ArrowRight' ? step : -step));
    }
  });
  player.onTime((t) => {
    play.textContent = player.playing ? '❚❚' : '▶';
    scrub.value = String(t);
    time.textContent = `t = ${t.toFixed(3)} s / ${end().toFixed(3)} s`;
  });
  return {
    setRange(endTime: number, frameStep: number) {
      step = frameStep > 0 ? frameStep : step;
      scrub.max = String(endTime);
      scrub.step = String(step);
      time.textContent = `t = ${player.time.toFixed(3)} s / ${endTime.toFixed(3)} s`;
    },
  };
}
